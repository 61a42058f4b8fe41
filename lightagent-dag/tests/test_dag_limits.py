"""Every DAGConfig limit is enforced (one test each)."""

from __future__ import annotations

import threading
import time

import pytest
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    DAGError,
    DAGLimitError,
    DecompositionProposal,
    TaskOutcome,
    TaskSpec,
)

FAST = {"poll_interval": 0.01, "poll_interval_max": 0.05, "retry_backoff_seconds": 0.01}


def spec(task_id: str, *deps: str, **kw: object) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal=task_id,
        acceptance_contract={},
        worker_key="w",
        verifier_key="v",
        depends_on=deps,
        **kw,
    )  # type: ignore[arg-type]


def _ok(make_dag, **config: object):
    dag = make_dag(
        config=DAGConfig(**{**FAST, **config}),
        verifiers={"v": CallableVerifier("v", lambda r: True)},
    )
    return dag


def test_max_tasks_at_create_and_on_decomposition(make_dag, run_id, security) -> None:
    dag = _ok(make_dag, max_tasks=2, max_attempts_per_task=1)
    dag.register_worker(
        "w",
        lambda ctx: TaskOutcome.decompose(
            DecompositionProposal(new_tasks=(spec("c1"), spec("c2")))
        ),
    )
    with pytest.raises(DAGLimitError) as info:
        dag.create_run([spec("a"), spec("b"), spec("c")], run_id=run_id, context=security())
    assert (
        info.value.code == "LA-DAG-BUDGET-EXHAUSTED" and info.value.details["limit"] == "max_tasks"
    )
    dag.create_run([spec("a")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.status.value == "failed"
    assert result.errors["a"]["details"]["limit"] == "max_tasks"
    assert len(dag.list_tasks(run_id)) == 1


def test_max_edges(make_dag, run_id, security) -> None:
    dag = _ok(make_dag, max_edges=1)
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("x"))
    with pytest.raises(DAGLimitError) as info:
        dag.create_run(
            [spec("a"), spec("b"), spec("c", "a", "b")], run_id=run_id, context=security()
        )
    assert info.value.details == {"limit": "max_edges", "value": 2, "maximum": 1}
    dag.create_run([spec("a"), spec("c", "a")], run_id=run_id, context=security())
    assert dag.run(run_id).success


def test_max_decomposition_depth(make_dag, run_id, security) -> None:
    dag = _ok(make_dag, max_decomposition_depth=1, max_attempts_per_task=1)

    def work(ctx):
        if ctx.phase == "execute" and ctx.task.depth < 2:
            return TaskOutcome.decompose(
                DecompositionProposal(new_tasks=(spec(ctx.task_id + ".x"),))
            )
        return TaskOutcome.candidate(ctx.task_id)

    dag.register_worker("w", work)
    dag.create_run([spec("r")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.status.value == "failed"
    assert result.errors["r.x"]["details"]["limit"] == "max_decomposition_depth"
    assert dag.get_task(run_id, "r.x").depth == 1 and dag.get_task(run_id, "r.x.x") is None


def test_max_decompositions_per_task(make_dag, run_id, security) -> None:
    dag = _ok(make_dag, max_decompositions_per_task=1, max_attempts_per_task=1)
    counter = iter(range(100))
    dag.register_worker(
        "w",
        lambda ctx: (
            TaskOutcome.decompose(DecompositionProposal(new_tasks=(spec(f"c{next(counter)}"),)))
            if ctx.task_id == "r"
            else TaskOutcome.candidate("x")
        ),
    )
    dag.create_run([spec("r")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.errors["r"]["details"]["limit"] == "max_decompositions_per_task"
    assert dag.get_task(run_id, "r").decompositions == 1


def test_max_attempts_per_task(make_dag, run_id, security) -> None:
    dag = make_dag(
        config=DAGConfig(max_attempts_per_task=2, **FAST),
        verifiers={"v": CallableVerifier("v", lambda r: False)},
    )
    calls = []
    dag.register_worker("w", lambda ctx: calls.append(1) or TaskOutcome.candidate("x"))
    dag.create_run([spec("a")], run_id=run_id, context=security())
    assert dag.run(run_id).status.value == "failed"
    assert len(calls) == 2 and dag.get_task(run_id, "a").attempts == 2


def _peak_tracker():
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def enter() -> None:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])

    def leave() -> None:
        with lock:
            state["now"] -= 1

    return state, enter, leave


def test_max_concurrency(make_dag, run_id, security) -> None:
    dag = _ok(make_dag, max_concurrency=2)
    state, enter, leave = _peak_tracker()
    both_in = threading.Event()

    def work(ctx):
        enter()
        if state["now"] == 2:
            both_in.set()
        # The first task waits for a second one to join it (bounded: a scheduler that never
        # runs two at once fails the peak check below instead of hanging).
        both_in.wait(30)
        time.sleep(0.05)  # lingers, so a third task started too early would be counted
        leave()
        return TaskOutcome.candidate("x")

    dag.register_worker("w", work)
    dag.create_run([spec(f"t{i}") for i in range(6)], run_id=run_id, context=security())
    assert dag.run(run_id).success
    assert state["peak"] == 2


def test_max_pending_verifications(make_dag, run_id, security) -> None:
    state, enter, leave = _peak_tracker()
    pending_seen: list[int] = []

    def verify(request) -> bool:
        enter()
        pending_seen.append(
            sum(1 for t in dag.list_tasks(request.run.run_id) if t.status.value == "verifying")
        )
        time.sleep(0.05)
        leave()
        return True

    dag = make_dag(
        config=DAGConfig(
            max_concurrency=4, max_pending_verifications=1, verification_concurrency=4, **FAST
        ),
        verifiers={"v": CallableVerifier("v", verify)},
    )
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate(ctx.task_id))
    dag.create_run([spec(f"t{i}") for i in range(5)], run_id=run_id, context=security())
    assert dag.run(run_id).success
    assert state["peak"] == 1 and max(pending_seen) == 1


def test_verification_concurrency(make_dag, run_id, security) -> None:
    state, enter, leave = _peak_tracker()

    def verify(request) -> bool:
        enter()
        time.sleep(0.05)
        leave()
        return True

    dag = make_dag(
        config=DAGConfig(max_concurrency=4, verification_concurrency=2, **FAST),
        verifiers={"v": CallableVerifier("v", verify)},
    )
    dag.register_worker("w", lambda ctx: TaskOutcome.candidate(ctx.task_id))
    dag.create_run([spec(f"t{i}") for i in range(6)], run_id=run_id, context=security())
    assert dag.run(run_id).success
    assert state["peak"] <= 2


def test_max_artifact_bytes(make_dag, run_id, security) -> None:
    dag = _ok(make_dag, max_artifact_bytes=8, max_attempts_per_task=1)
    dag.register_worker(
        "w", lambda ctx: TaskOutcome.candidate("x" * (4 if ctx.task_id == "small" else 9))
    )
    dag.create_run([spec("small"), spec("big")], run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.tasks["small"].value == "verified" and result.tasks["big"].value == "failed"
    assert result.errors["big"]["code"] == "LA-DAG-ARTIFACT-TOO-LARGE"


@pytest.mark.parametrize(
    "field, value",
    [
        ("max_tasks", 0),
        ("max_edges", -1),
        ("max_concurrency", 0),
        ("max_attempts_per_task", 1.5),
        ("task_lease_seconds", 0),
        ("failure_policy", "yolo"),
        ("max_pending_verifications", True),
    ],
)
def test_invalid_config_is_a_typed_error(field: str, value: object) -> None:
    with pytest.raises(DAGError) as info:
        DAGConfig(**{field: value})  # type: ignore[arg-type]
    assert info.value.code == "LA-CONFIG" and field in info.value.message


def test_heartbeat_must_be_shorter_than_the_lease() -> None:
    with pytest.raises(DAGError):
        DAGConfig(task_lease_seconds=1, heartbeat_interval=2)
    assert DAGConfig(task_lease_seconds=3).heartbeat_seconds == 1


def test_task_timeout(make_dag, run_id, security) -> None:
    import asyncio

    dag = _ok(make_dag, task_timeout_seconds=0.2, max_attempts_per_task=2)

    async def hang(ctx):
        await asyncio.sleep(30)

    dag.register_worker("w", hang)
    dag.create_run([spec("t")], run_id=run_id, context=security())
    started = time.monotonic()
    result = dag.run(run_id)
    assert time.monotonic() - started < 10
    assert (
        result.status.value == "failed"
        and result.errors["t"]["details"]["limit"] == "task_timeout_seconds"
    )
    assert dag.get_task(run_id, "t").attempts == 2
