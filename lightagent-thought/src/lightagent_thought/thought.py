"""Tree of Thought: plan and reflect over the run's real tools before the first model request.

With ``LightAgent(tree_of_thought=True)`` a run makes at most two extra model calls before
its first request: **plan** (the model proposes up to ``branches`` alternative plans, each
a list of steps naming the tools it would call, from the tools this run really offers)
and **reflect** (the model compares them, told which steps name a tool that does not
exist, and picks or revises one). The chosen plan goes into the run's system message; both
steps are events (``thought_plan``, ``thought_reflection``) and streamed as ``thought``
items in ``result_format="event"``. ``tot_model=`` (with ``tot_api_key``/``tot_base_url``)
sends the two calls to another model; by default the agent's own model makes them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ConfigurationError, LightAgentError, ModelError, classify_exception
from lightagent.models.base import ModelRequest, ModelResponse
from lightagent.run.effects import CallModel, Output
from lightagent.run.recall import inject

__all__ = ["Thought", "ThoughtRequest", "ThoughtStep", "TreeOfThought", "thought_setting"]

_PLANNER = (
    "You plan how an assistant will answer a request before it acts. You never answer the "
    "request yourself. Use only the tools listed; a step that needs no tool has tool null."
)
_REFLECTOR = (
    "You review candidate plans for answering a request and choose the one most likely to "
    "succeed with the listed tools. Steps that name a tool which does not exist cannot run."
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


@dataclass(frozen=True)
class TreeOfThought:
    """Tree of Thought settings: ``branches`` plans, then a reflection unless ``reflect=False``.

    ``max_chars`` bounds the plan text put into the prompt; ``max_steps`` the steps kept per plan.
    """

    branches: int = 3
    reflect: bool = True
    max_chars: int = 4000
    max_steps: int = 12

    def __post_init__(self) -> None:
        for name in ("branches", "max_chars", "max_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"TreeOfThought({name}=...) must be an integer >= 1, got {value!r}",
                )

    @property
    def max_model_calls(self) -> int:
        """The most model calls planning adds to a run."""
        return 2 if self.reflect else 1


class ThoughtRequest(ModelRequest):
    """A planning or reflection request (routed to ``tot_model`` when one is set)."""


@dataclass
class Thought:
    """The outcome of planning: every candidate plan, the chosen one and the reflection."""

    plans: list[list[dict[str, Any]]]
    chosen: int = 0
    steps: list[dict[str, Any]] = field(default_factory=list)
    reflection: str | None = None
    unknown_tools: list[str] = field(default_factory=list)
    model_calls: int = 0

    def text(self, max_chars: int = 4000) -> str:
        """The plan as the run's model reads it."""
        lines = [
            "Plan (made before answering; follow it, and adapt it when a tool result calls for that):"
        ]
        for i, step in enumerate(self.steps, 1):
            tool = step.get("tool")
            lines.append(f"{i}. {step.get('step', '')}" + (f" (tool: {tool})" if tool else ""))
        if self.reflection:
            lines.append(f"Reflection: {self.reflection}")
        text = "\n".join(lines)
        return text if len(text) <= max_chars else text[: max_chars - 3] + "..."

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "plans": self.plans,
            "chosen": self.chosen,
            "steps": self.steps,
            "reflection": self.reflection,
            "unknown_tools": self.unknown_tools,
            "model_calls": self.model_calls,
        }


class _Routed:
    """The run's model, with planning requests sent to the Tree-of-Thought model."""

    def __init__(self, main: Any, thought: Any) -> None:
        self._main = main
        self._thought = thought

    def __getattr__(self, name: str) -> Any:
        return getattr(self._main, name)

    def _pick(self, request: Any) -> Any:
        return self._thought if isinstance(request, ThoughtRequest) else self._main

    def complete(self, request: ModelRequest) -> ModelResponse:
        return self._pick(request).complete(request)  # type: ignore[no-any-return]

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        return await self._pick(request).acomplete(request)  # type: ignore[no-any-return]

    def stream(self, request: ModelRequest) -> Any:
        return self._pick(request).stream(request)

    def astream(self, request: ModelRequest) -> Any:
        return self._pick(request).astream(request)


class ThoughtStep:
    """Planning for one run: ``plan`` is a generator the run's step yields from."""

    def __init__(self, config: TreeOfThought, model: Any = None) -> None:
        self.config = config
        self.model = model

    def plan(
        self,
        spec: Any,
        st: Any,
        query: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> Generator[Any, Any, Thought]:
        """Plan, reflect, put the chosen plan into ``messages`` and record it in ``st.thought``."""
        if self.model is not None and not isinstance(spec.model, _Routed):
            spec.model = _Routed(spec.model, self.model)
        cfg = self.config
        ctx = spec.ctx
        catalogue = _catalogue(tools)
        names = {entry["name"] for entry in catalogue}
        context = _context(messages)
        asked = _plan_prompt(query, catalogue, context, cfg.branches)
        reply, latency = yield from _call(spec, st, _PLANNER, asked)
        plans = _plans(reply.content, cfg)
        unknown = sorted(
            {s["tool"] for p in plans for s in p if s.get("tool") not in (None, *names)}
        )
        thought = Thought(plans=plans, steps=plans[0], unknown_tools=unknown, model_calls=1)
        if ctx.active:
            ctx.emit(
                "thought_plan",
                {"plans": plans, "unknown_tools": unknown, "latency_ms": latency, "query": query},
            )
        if cfg.reflect:
            asked = _reflect_prompt(query, catalogue, plans, unknown)
            reply, latency = yield from _call(spec, st, _REFLECTOR, asked)
            thought.model_calls = 2
            choice, reflection, revised = _reflection(reply.content, len(plans), cfg)
            thought.chosen, thought.reflection = choice, reflection
            thought.steps = revised or plans[choice]
            if ctx.active:
                ctx.emit(
                    "thought_reflection",
                    {
                        "chosen": choice,
                        "reflection": reflection,
                        "steps": thought.steps,
                        "latency_ms": latency,
                    },
                )
        # a step naming a tool that does not exist keeps its text, never the tool
        thought.steps = [
            {**s, "tool": s.get("tool") if s.get("tool") in names else None} for s in thought.steps
        ]
        inject(messages, thought.text(cfg.max_chars))
        st.thought = thought
        if spec.stream:
            yield Output("thought", {"type": "thought", **thought.to_dict()})
        return thought


def _call(
    spec: Any, st: Any, system: str, user: str
) -> Generator[Any, Any, tuple[ModelResponse, float]]:
    request = ThoughtRequest(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        options=dict(spec.model_options),
    )
    started = time.perf_counter()
    try:
        response = yield CallModel(request)
    except LightAgentError:
        raise
    except Exception as exc:
        raise ModelError(
            classify_exception(exc, "LA-PROVIDER"),
            f"the planning call failed: {type(exc).__name__}: {exc}",
            details={"exception": type(exc).__name__, "stage": "thought"},
        ) from exc
    if not isinstance(response, ModelResponse):
        raise ModelError("LA-MODEL-OUTPUT", "the planning model returned no ModelResponse")
    st.model_requests += 1
    if response.usage is not None:
        st.usage = response.usage if st.usage is None else st.usage + response.usage
    return response, round((time.perf_counter() - started) * 1000, 3)


def _catalogue(tools: Iterable[dict[str, Any]] | None) -> list[dict[str, Any]]:
    out = []
    for schema in tools or ():
        function = schema.get("function") or {}
        name = function.get("name")
        if isinstance(name, str):
            params = sorted((function.get("parameters") or {}).get("properties") or {})
            out.append(
                {"name": name, "description": function.get("description") or "", "params": params}
            )
    return out


def _context(messages: list[dict[str, Any]]) -> str:
    """The conversation before the question, briefly (the last few user/assistant turns)."""
    turns = [
        m for m in messages[:-1] if m.get("role") in ("user", "assistant") and m.get("content")
    ]
    return "\n".join(f"{m['role']}: {str(m['content'])[:500]}" for m in turns[-6:])


def _tool_lines(catalogue: list[dict[str, Any]]) -> str:
    if not catalogue:
        return "(no tools: every step has tool null)"
    return "\n".join(
        f"- {t['name']}({', '.join(t['params'])}): {t['description'][:300]}" for t in catalogue
    )


def _plan_prompt(query: str, catalogue: list[dict[str, Any]], context: str, branches: int) -> str:
    head = f"Conversation so far:\n{context}\n\n" if context else ""
    return (
        f"{head}Request:\n{query}\n\nTools:\n{_tool_lines(catalogue)}\n\n"
        f"Propose up to {branches} different plans. Answer with JSON only: "
        '{"plans": [{"steps": [{"step": "what to do", "tool": "tool name or null"}]}]}'
    )


def _reflect_prompt(
    query: str,
    catalogue: list[dict[str, Any]],
    plans: list[list[dict[str, Any]]],
    unknown: list[str],
) -> str:
    shown = json.dumps(
        [{"plan": i + 1, "steps": p} for i, p in enumerate(plans)], ensure_ascii=False
    )
    missing = (
        f"\nThese tools do not exist and cannot be called: {', '.join(unknown)}." if unknown else ""
    )
    return (
        f"Request:\n{query}\n\nTools:\n{_tool_lines(catalogue)}\n\nCandidate plans:\n{shown}{missing}\n\n"
        "Choose the best plan, revise its steps if needed, and say why in one or two sentences. "
        'Answer with JSON only: {"choice": <plan number>, "reflection": "...", "steps": [...]}'
    )


def _json(text: str | None) -> Any:
    if not text:
        return None
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(text)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def _steps(raw: Any, cfg: TreeOfThought) -> list[dict[str, Any]]:
    if isinstance(raw, dict):
        raw = raw.get("steps")
    out = []
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, str) and item.strip():
            out.append({"step": item.strip(), "tool": None})
        elif isinstance(item, dict) and str(item.get("step") or "").strip():
            tool = item.get("tool")
            out.append(
                {
                    "step": str(item["step"]).strip(),
                    "tool": tool if isinstance(tool, str) and tool else None,
                }
            )
    return out[: cfg.max_steps]


def _plans(text: str | None, cfg: TreeOfThought) -> list[list[dict[str, Any]]]:
    data = _json(text)
    raw = data.get("plans") if isinstance(data, dict) else data
    plans = []
    for item in raw if isinstance(raw, list) else ():
        steps = _steps(item, cfg)
        if steps:
            plans.append(steps)
    if plans:
        return plans[: cfg.branches]
    # not the JSON asked for: the answer's lines are one plan
    lines = [line.strip(" -*\t") for line in (text or "").splitlines()]
    steps = [{"step": line, "tool": None} for line in lines if line][: cfg.max_steps]
    return [steps or [{"step": "Answer the request directly.", "tool": None}]]


def _reflection(
    text: str | None, count: int, cfg: TreeOfThought
) -> tuple[int, str | None, list[dict[str, Any]]]:
    data = _json(text)
    if not isinstance(data, dict):
        return 0, (text or "").strip()[:1000] or None, []
    choice = data.get("choice")
    index = choice - 1 if isinstance(choice, int) and 1 <= choice <= count else 0
    reflection = data.get("reflection")
    return index, str(reflection)[:1000] if reflection else None, _steps(data.get("steps"), cfg)


def thought_setting(value: Any) -> TreeOfThought | None:
    """``tree_of_thought=`` as settings: False/None (off), True (defaults) or a ``TreeOfThought``."""
    if value is None or value is False:
        return None
    if value is True:
        return TreeOfThought()
    if isinstance(value, TreeOfThought):
        return value
    raise ConfigurationError(
        "LA-CONFIG",
        f"tree_of_thought= must be True, False or a TreeOfThought, got {type(value).__name__}",
    )
