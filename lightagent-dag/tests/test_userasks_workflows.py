"""User ask 30 (shared/research/user-asks.md) on LightDAG: a failing, retried branch never holds
back an independent one, and a new run starts from fresh counters.
"""

from __future__ import annotations

import threading

from lightagent_dag import CallableVerifier, TaskOutcome, TaskSpec

WAIT = 20.0  # generous: the scheduler polls every 10-50 ms


def spec(task_id: str, *deps: str) -> TaskSpec:
    return TaskSpec(
        task_id=task_id,
        goal=f"do {task_id}",
        acceptance_contract={"task": task_id},
        worker_key="w",
        verifier_key="v",
        depends_on=deps,
    )


GRAPH = [spec("A"), spec("B", "A"), spec("C", "A"), spec("D", "B")]


def test_d_starts_while_c_is_failing_and_retrying(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", lambda r: True)})
    d_started = threading.Event()
    runs: list[str] = []
    lock = threading.Lock()
    seen_by_c: list[bool] = []

    def work(ctx):
        with lock:
            runs.append(ctx.task_id)
            c_attempt = runs.count("C")
        if ctx.task_id == "D":
            d_started.set()
        if ctx.task_id == "C":
            if c_attempt == 1:
                raise RuntimeError("C fails once")
            # The retry ends only once D has started: a scheduler that made D wait for C's
            # branch would leave this wait to time out.
            seen_by_c.append(d_started.wait(WAIT))
        return TaskOutcome.candidate(ctx.task_id.lower())

    dag.register_worker("w", work)
    dag.create_run(GRAPH, run_id=run_id, context=security())
    result = dag.run(run_id)
    assert result.success, result.errors
    assert seen_by_c == [True]
    assert sorted(runs) == ["A", "B", "C", "C", "D"]  # A and B ran once, C twice
    assert dag.get_task(run_id, "C").attempts == 2
    assert dag.store.publication_counts(run_id) == dict.fromkeys("ABCD", 1)


def test_a_new_run_id_starts_from_fresh_counters(make_dag, run_id, security) -> None:
    dag = make_dag(verifiers={"v": CallableVerifier("v", lambda r: True)})
    failures = {"C": 1}

    def work(ctx):
        if failures.get(ctx.task_id):
            failures[ctx.task_id] -= 1
            raise RuntimeError("once")
        return TaskOutcome.candidate(f"{ctx.run_id}:{ctx.task_id}")

    dag.register_worker("w", work)
    dag.create_run(GRAPH, run_id=run_id, context=security())
    assert dag.run(run_id).success
    second = f"{run_id}-2"
    dag.create_run(GRAPH, run_id=second, context=security())
    assert dag.run(second).success
    assert dag.get_task(run_id, "C").attempts == 2
    assert {t: dag.get_task(second, t).attempts for t in "ABCD"} == dict.fromkeys("ABCD", 1)
    assert dag.read_artifact(second, "D") == f"{second}:D".encode()
    assert dag.read_artifact(run_id, "D") == f"{run_id}:D".encode()


def test_a_failing_branch_fails_only_its_dependants_and_the_run_ends(
    make_dag, run_id, security
) -> None:
    from lightagent_dag import DAGConfig

    cfg = DAGConfig(
        max_attempts_per_task=2,
        poll_interval=0.01,
        poll_interval_max=0.05,
        retry_backoff_seconds=0.01,
    )
    dag = make_dag(config=cfg, verifiers={"v": CallableVerifier("v", lambda r: True)})
    ran: list[str] = []

    def work(ctx):
        ran.append(ctx.task_id)
        if ctx.task_id == "C":
            raise RuntimeError("C is broken")
        return TaskOutcome.candidate(ctx.task_id.lower())

    dag.register_worker("w", work)
    dag.create_run([*GRAPH, spec("E", "C")], run_id=run_id, context=security())
    result = dag.run(run_id)  # returns: nothing can move any more
    assert result.status.value == "failed" and not result.success
    assert {t: s.value for t, s in result.tasks.items() if t in "ABD"} == dict.fromkeys(
        "ABD", "verified"
    )
    assert result.tasks["C"].value == "failed" and result.tasks["E"].value != "verified"
    assert "E" not in ran and ran.count("C") == 2
    assert dag.read_artifact(run_id, "D") == b"d"
