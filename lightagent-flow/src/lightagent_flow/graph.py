"""Graph checks over a flow's steps: unknown dependencies, cycles, isolated steps, order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lightagent.errors import ValidationError

from lightagent_flow.step import LightFlowStep

__all__ = ["downstream", "raise_for_report", "topological_order", "validate_steps"]


def _issue(code: str, message: str, steps: Iterable[str]) -> dict[str, Any]:
    return {"code": code, "message": message, "steps": list(steps)}


def _find_cycle(steps: Sequence[LightFlowStep]) -> list[str] | None:
    names = {s.name for s in steps}
    deps = {s.name: [d for d in s.depends_on if d in names] for s in steps}
    color: dict[str, int] = dict.fromkeys(names, 0)  # 0 new, 1 on stack, 2 done
    for root in (s.name for s in steps):
        if color[root]:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path: list[str] = []
        while stack:
            node, index = stack.pop()
            if index == 0:
                color[node] = 1
                path.append(node)
            if index < len(deps[node]):
                stack.append((node, index + 1))
                nxt = deps[node][index]
                if color[nxt] == 1:
                    return [*path[path.index(nxt) :], nxt]
                if color[nxt] == 0:
                    stack.append((nxt, 0))
            else:
                color[node] = 2
                path.pop()
    return None


def validate_steps(steps: Sequence[LightFlowStep], *, strict: bool = False) -> dict[str, Any]:
    """The seeds' report ``{"errors": [...], "warnings": [...]}`` plus ``valid``.

    Each issue is ``{"code", "message", "steps"}``. Isolated steps are warnings, or errors
    when ``strict`` is true.
    """
    errors: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    if not steps:
        errors.append(_issue("LA-FLOW-EMPTY", "the flow has no steps", []))
    seen: set[str] = set()
    for step in steps:
        if step.name in seen:
            errors.append(
                _issue("LA-FLOW-DUPLICATE-STEP", f"duplicate step name {step.name!r}", [step.name])
            )
        seen.add(step.name)
    for step in steps:
        for dep in step.depends_on:
            if dep not in seen:
                errors.append(
                    _issue(
                        "LA-FLOW-UNKNOWN-DEPENDENCY",
                        f"step {step.name!r} depends on unknown step {dep!r}",
                        [step.name, dep],
                    )
                )
            elif dep == step.name:
                errors.append(
                    _issue("LA-FLOW-CYCLE", f"step {step.name!r} depends on itself", [step.name])
                )
    if not any(e["code"] == "LA-FLOW-CYCLE" for e in errors):
        cycle = _find_cycle(steps)
        if cycle:
            errors.append(
                _issue("LA-FLOW-CYCLE", "cycle detected: " + " -> ".join(cycle), cycle[:-1])
            )
    if len(steps) > 1:
        fed = {dep for s in steps for dep in s.depends_on}
        for step in steps:
            if not step.depends_on and step.name not in fed:
                issue = _issue(
                    "LA-FLOW-ISOLATED-STEP",
                    f"step {step.name!r} is isolated: nothing depends on it and it depends on nothing",
                    [step.name],
                )
                (errors if strict else warnings).append(issue)
    return {"valid": not errors, "errors": errors, "warnings": warnings}


def raise_for_report(report: dict[str, Any]) -> None:
    """Raise a :class:`ValidationError` carrying the first error's code when the report has errors."""
    errors = report["errors"]
    if errors:
        text = "; ".join(e["message"] for e in errors)
        raise ValidationError(
            errors[0]["code"], f"invalid flow: {text}", details={"errors": errors}
        )


def topological_order(steps: Sequence[LightFlowStep]) -> list[str]:
    """Step names with every dependency before its dependants; ties keep declaration order."""
    remaining = {s.name: set(s.depends_on) for s in steps}
    order: list[str] = []
    while remaining:
        ready = [s.name for s in steps if s.name in remaining and not remaining[s.name]]
        if not ready:  # a cycle; validate_steps reports it
            raise ValidationError("LA-FLOW-CYCLE", "cycle detected among " + ", ".join(remaining))
        for name in ready:
            del remaining[name]
            for deps in remaining.values():
                deps.discard(name)
        order.extend(ready)
    return order


def downstream(steps: Sequence[LightFlowStep], roots: Iterable[str]) -> set[str]:
    """The given steps and every step that depends on them, directly or not."""
    dependants: dict[str, list[str]] = {s.name: [] for s in steps}
    for step in steps:
        for dep in step.depends_on:
            dependants.setdefault(dep, []).append(step.name)
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(dependants.get(name, ()))
    return seen
