"""User ask 30 (shared/research/user-asks.md) on LightFlow: a failing, retried branch never
holds back an independent one; a failure inside a parallel batch reaches its fallback;
resume re-runs only what did not finish; a new run id starts from fresh counters.
"""

from __future__ import annotations

import asyncio

from lightagent_flow import LightFlow

WAIT = 20.0


def diamond(c_agent, *, fallback=None, store=None, calls=None) -> LightFlow:
    calls = calls if calls is not None else []

    def recorded(name: str, output: str):
        async def run(query: str) -> str:
            calls.append(name)
            return output

        return run

    return (
        LightFlow(store=store, retry_backoff=0.01)
        .step("A", agent=recorded("A", "a"))
        .step("B", agent=recorded("B", "b"), depends_on="A")
        .step("C", agent=c_agent, depends_on="A", max_retry=2, fallback_agent=fallback)
        .step("D", agent=recorded("D", "d"), depends_on="B")
    )


def test_d_starts_while_c_fails_and_is_retried() -> None:
    attempts: list[str] = []
    d_seen: list[bool] = []
    calls: list[str] = []

    async def c(query: str) -> str:
        attempts.append("C")
        if len(attempts) == 1:
            raise RuntimeError("C fails once")
        for _ in range(int(WAIT / 0.01)):  # the retry ends only once D has run
            if "D" in calls:
                break
            await asyncio.sleep(0.01)
        d_seen.append("D" in calls)
        return "c"

    result = diamond(c, calls=calls).run("q")
    assert result.success
    assert d_seen == [True]
    s = result.steps
    assert s["C"].attempts == 2 and s["C"].retry_count == 1
    assert s["D"].started_at < s["C"].ended_at
    assert sorted(calls) == ["A", "B", "D"]


def test_a_failure_in_a_parallel_batch_reaches_its_fallback() -> None:
    async def c(query: str) -> str:
        raise RuntimeError("C always fails")

    async def rescue(query: str) -> str:
        return "c from fallback"

    result = diamond(c, fallback=rescue).run("q")
    assert result.success
    c_step = result.steps["C"]
    assert c_step.used_fallback and c_step.content == "c from fallback" and c_step.attempts == 2


def test_resume_after_a_failed_branch_reruns_only_that_branch(flow_store, run_id) -> None:
    calls: list[str] = []
    broken = {"C": True}

    async def c(query: str) -> str:
        calls.append("C")
        if broken["C"]:
            raise RuntimeError("C is down")
        return "c"

    flow = diamond(c, store=flow_store, calls=calls)
    first = flow.run("q", run_id=run_id)
    assert not first.success and first.steps["C"].status == "failed"
    assert sorted(calls) == ["A", "B", "C", "C", "D"]
    calls.clear()
    broken["C"] = False
    again = flow.resume(run_id)
    assert again.success
    assert calls == ["C"]  # A, B and D come from the store


def test_a_new_run_id_starts_from_fresh_counters(flow_store, run_id) -> None:
    fails = {"C": 1}

    async def c(query: str) -> str:
        if fails["C"]:
            fails["C"] -= 1
            raise RuntimeError("once")
        return "c"

    flow = diamond(c, store=flow_store)
    assert flow.run("q", run_id=run_id).steps["C"].attempts == 2
    second = flow.run("q", run_id=f"{run_id}-2")
    assert second.success and not second.idempotent_replay
    assert {n: s.attempts for n, s in second.steps.items()} == dict.fromkeys("ABCD", 1)
