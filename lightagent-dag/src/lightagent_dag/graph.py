"""Pure graph checks: unknown dependencies, cycles, topological order, closures."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lightagent_dag.errors import DAGError

__all__ = ["check_graph", "dependency_closure", "topological_order"]


def topological_order(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Task ids so that every task comes after its dependencies; ``LA-DAG-CYCLE`` on a cycle.

    ``edges`` maps task id -> the ids it depends on; every id must be a key.
    """
    deps = {task: list(dict.fromkeys(d)) for task, d in edges.items()}
    for task, ds in deps.items():
        for dep in ds:
            if dep not in deps:
                raise DAGError(
                    "LA-DAG-UNKNOWN-DEPENDENCY",
                    f"task {task!r} depends on unknown task {dep!r}",
                    details={"task_id": task, "depends_on": dep},
                )
    order: list[str] = []
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for start in deps:
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        state[start] = 1
        while stack:
            node, index = stack[-1]
            children = deps[node]
            if index < len(children):
                stack[-1] = (node, index + 1)
                child = children[index]
                mark = state.get(child)
                if mark == 1:
                    path = [n for n, _ in stack]
                    cycle = [*path[path.index(child) :], child]
                    raise DAGError(
                        "LA-DAG-CYCLE",
                        "dependency cycle: " + " -> ".join(cycle),
                        details={"cycle": cycle},
                    )
                if mark is None:
                    state[child] = 1
                    stack.append((child, 0))
            else:
                stack.pop()
                state[node] = 2
                order.append(node)
    return order


def check_graph(edges: Mapping[str, Iterable[str]]) -> None:
    """Raise ``LA-DAG-UNKNOWN-DEPENDENCY`` or ``LA-DAG-CYCLE`` when the graph is not a DAG."""
    topological_order(edges)


def dependency_closure(edges: Mapping[str, Iterable[str]], task_ids: Iterable[str]) -> set[str]:
    """``task_ids`` plus everything they depend on, transitively."""
    seen: set[str] = set()
    todo = list(task_ids)
    while todo:
        task = todo.pop()
        if task in seen:
            continue
        seen.add(task)
        todo.extend(edges.get(task, ()))
    return seen
