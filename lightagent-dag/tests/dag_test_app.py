"""The application module the worker-process tests load with ``--app dag_test_app:configure``.

Tasks sleep ``metadata["sleep_ms"]`` milliseconds, then answer ``<task_id>:ok``; the
verifier accepts exactly that. With ``DAG_TEST_STOP_FILE`` set, a worker writes its pid
into that file when it starts a task whose metadata has ``"announce": true``.

Two handshakes let a test order things without guessing at times (each bounded, so a
broken handshake fails the test instead of hanging it):

- ``"meet": {"file": path, "workers": n}``: the task writes its process id into ``path``,
  then waits until ``n`` different processes have written theirs;
- ``"hold_until": path``: the task waits until ``path`` exists.
"""

from __future__ import annotations

import os
import time

from lightagent_dag import CallableVerifier, LightDAG, TaskOutcome

HANDSHAKE_BOUND = 120.0  # seconds; only a broken handshake waits this long


def _meet(path: str, workers: int) -> None:
    with open(path, "a") as handle:
        handle.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + HANDSHAKE_BOUND
    while time.monotonic() < deadline:
        with open(path) as handle:
            lines = handle.read().split("\n")[:-1]  # a line counts once its newline is written
        if len(set(lines)) >= workers:
            return
        time.sleep(0.02)


def _hold(path: str) -> None:
    deadline = time.monotonic() + HANDSHAKE_BOUND
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


def _work(context):
    meta = context.spec.metadata
    if meta.get("announce") and os.environ.get("DAG_TEST_STOP_FILE"):
        with open(os.environ["DAG_TEST_STOP_FILE"], "a") as handle:
            handle.write(f"{os.getpid()} {context.fence}\n")
    if meta.get("meet"):
        _meet(meta["meet"]["file"], int(meta["meet"]["workers"]))
    if meta.get("hold_until"):
        _hold(meta["hold_until"])
    time.sleep(int(meta.get("sleep_ms", 0)) / 1000.0)
    return TaskOutcome.candidate(f"{context.task_id}:ok")


def configure(dag: LightDAG) -> None:
    """Register the test worker and verifier on ``dag``."""
    dag.register_worker("sleepy", _work)
    dag.register_verifier(
        "ok",
        CallableVerifier("ok", lambda r: r.candidate_content == f"{r.task.task_id}:ok".encode()),
    )


def _fan(context):
    meta = dict(context.spec.metadata)
    if context.phase == "execute" and context.task.depth < int(meta.get("levels", 2)):
        from lightagent_dag import DecompositionProposal, TaskSpec

        children = tuple(
            TaskSpec(
                task_id=f"{context.task_id}.{i}",
                goal="part",
                acceptance_contract={},
                worker_key="fan",
                verifier_key="fan-ok",
                metadata=meta,
            )
            for i in range(int(meta.get("fanout", 3)))
        )
        return TaskOutcome.decompose(DecompositionProposal(new_tasks=children))
    if context.phase == "integrate":
        parts = [context.dependency_text(d) for d in sorted(context.dependency_artifacts)]
        return TaskOutcome.candidate("(" + ",".join(parts) + ")")
    time.sleep(int(meta.get("sleep_ms", 0)) / 1000.0)
    return TaskOutcome.candidate(context.task_id)


def _fan_ok(request) -> bool:
    if request.kind == "decomposition":
        prefix = request.task.task_id + "."
        return all(t.task_id.startswith(prefix) for t in request.decomposition.new_tasks)
    deps = request.dependency_artifacts
    if deps:
        expected = "(" + ",".join(deps[d].decode() for d in sorted(deps)) + ")"
    else:
        expected = request.task.task_id
    return request.candidate_content == expected.encode()


def configure_fan(dag: LightDAG) -> None:
    """Register the fan-out worker (decomposes to ``levels`` depth) and its verifier."""
    configure(dag)
    dag.register_worker("fan", _fan)
    dag.register_verifier("fan-ok", CallableVerifier("fan-ok", _fan_ok))


def worker_main(argv: list[str]) -> None:
    """Run ``lightagent dag worker`` with ``argv`` in this (forked) process, quietly."""
    import argparse

    from lightagent_dag.cli import configure_dag, run_dag

    for fd in (1, 2):
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    parser = argparse.ArgumentParser()
    configure_dag(parser)
    os._exit(run_dag(parser.parse_args(argv)))
