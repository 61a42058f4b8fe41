"""Concurrency, timeouts that stop the step, retries with backoff, fallback and cancellation."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from lightagent.cancellation import CancellationToken
from lightagent_flow import LightFlow


def test_d_starts_when_b_ends_not_when_slow_c_ends() -> None:
    release = asyncio.Event()
    order: list[str] = []

    async def slow_c(query: str) -> str:
        order.append("C started")
        try:  # C ends only after D has ended (bounded, so a staged scheduler fails, not hangs)
            await asyncio.wait_for(release.wait(), 30)
        except asyncio.TimeoutError:
            order.append("C gave up waiting")
        return "c"

    async def d(query: str) -> str:
        order.append("D ran")
        release.set()
        return "d"

    async def fast(query: str) -> str:
        return "ok"

    flow = (
        LightFlow()
        .step("A", agent=fast)
        .step("B", agent=fast, depends_on="A")
        .step("C", agent=slow_c, depends_on="A")
        .step("D", agent=d, depends_on="B")
    )
    result = flow.run("q")
    s = result.steps
    assert result.success
    # D started after B ended and before C ended: C's branch never held D back.
    assert s["B"].ended_at <= s["D"].started_at < s["C"].ended_at
    assert s["B"].started_at < s["C"].ended_at and s["C"].started_at < s["D"].started_at
    assert order == ["C started", "D ran"]


def test_sync_agents_of_independent_branches_run_in_parallel_threads() -> None:
    barrier = threading.Barrier(2, timeout=30)

    def meet(query: str) -> str:
        barrier.wait()  # deadlocks (BrokenBarrierError) unless both run at once
        return "met"

    flow = LightFlow().step("x", agent=meet).step("y", agent=meet)
    result = flow.run("q")
    assert result.success, result.error


def test_a_failed_branch_skips_only_its_dependants(recorder: Any, flow_executor: Any) -> None:
    recorder.fail["B"] = 10
    flow = (
        LightFlow(executor=flow_executor)
        .step("A", agent=recorder.agent("A"))
        .step("B", agent=recorder.agent("B"), depends_on="A")
        .step("C", agent=recorder.agent("C"), depends_on="A")
        .step("D", agent=recorder.agent("D"), depends_on="B")
        .step("E", agent=recorder.agent("E"), depends_on="C")
    )
    result = flow.run("q", trace=True)
    status = {n: r.status for n, r in result.steps.items()}
    assert status == {"A": "success", "B": "failed", "C": "success", "D": "skipped", "E": "success"}
    assert recorder.count("D") == 0 and recorder.count("E") == 1
    assert result.status == "failed" and "B" in result.error
    assert result.error_code == "LA-FLOW-AGENT-ERROR"
    assert "dependency B" in result.steps["D"].error


def test_async_timeout_cancels_the_step_task(flow_executor: Any) -> None:
    state = {"cancelled": False, "finished": False}

    async def hangs(query: str) -> str:
        try:
            await asyncio.sleep(30)
            state["finished"] = True
            return "late"
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise

    flow = LightFlow(executor=flow_executor).step("slow", agent=hangs, timeout=0.05)
    result = flow.run("q")
    step = result.steps["slow"]
    assert step.status == "failed" and step.error_code == "LA-FLOW-TIMEOUT"
    assert step.timed_out and step.timeout_mode == "cancelled"
    assert state == {"cancelled": True, "finished": False}


def test_sync_timeout_abandons_the_thread_and_does_not_retry_by_default() -> None:
    calls: list[float] = []
    gate = threading.Event()

    def blocking(query: str) -> str:
        calls.append(time.monotonic())
        gate.wait(5)
        return "late"

    flow = LightFlow(retry_backoff=0).step("s", agent=blocking, timeout=0.05, max_retry=3)
    result = flow.run("q")
    gate.set()
    step = result.steps["s"]
    assert step.status == "failed" and step.timed_out and step.timeout_mode == "abandoned"
    assert step.attempts == 1 and len(calls) == 1  # no second copy while the first still runs

    overlapping = LightFlow(retry_backoff=0).step(
        "s", agent=blocking, timeout=0.05, max_retry=2, allow_timeout_overlap=True
    )
    gate.clear()
    result = overlapping.run("q")
    gate.set()
    assert result.steps["s"].attempts == 2


def test_timeout_then_retry_succeeds_for_async_agents(flow_executor: Any) -> None:
    attempts = {"n": 0}

    async def flaky(query: str) -> str:
        attempts["n"] += 1
        if attempts["n"] == 1:
            await asyncio.sleep(10)
        return "second time"

    result = (
        LightFlow(executor=flow_executor, retry_backoff=0)
        .step("s", agent=flaky, timeout=0.05, max_retry=2)
        .run("q")
    )
    step = result.steps["s"]
    assert step.status == "success" and step.content == "second time"
    assert step.attempts == 2 and step.retry_count == 1 and step.timed_out


def test_retries_back_off_exponentially(recorder: Any) -> None:
    recorder.fail["s"] = 3
    flow = LightFlow().step(
        "s", agent=recorder.agent("s"), max_retry=4, retry_backoff=0.01, retry_backoff_max=0.03
    )
    result = flow.run("q", trace=True)
    assert result.success and result.steps["s"].attempts == 4
    waits = [e["data"]["wait_s"] for e in result.trace if e["type"] == "step_retry"]
    assert waits == [0.01, 0.02, 0.03]  # doubled, then capped
    assert recorder.count("s") == 4


def test_fallback_agent_after_retries(recorder: Any, flow_executor: Any) -> None:
    recorder.fail["main"] = 99
    flow = LightFlow(executor=flow_executor, retry_backoff=0).step(
        "s",
        agent=recorder.agent("main"),
        max_retry=2,
        fallback_agent=recorder.agent("backup", "saved"),
    )
    result = flow.run("q", trace=True)
    step = result.steps["s"]
    assert step.status == "success" and step.content == "saved"
    assert step.used_fallback and step.attempts == 2
    assert "step_fallback" in [e["type"] for e in result.trace]
    assert recorder.count("main") == 2 and recorder.count("backup") == 1


def test_failing_fallback_fails_the_step(recorder: Any, flow_executor: Any) -> None:
    recorder.fail["main"] = 99
    recorder.fail["backup"] = 99
    flow = LightFlow(executor=flow_executor, retry_backoff=0).step(
        "s", agent=recorder.agent("main"), fallback_agent=recorder.agent("backup")
    )
    step = flow.run("q").steps["s"]
    assert step.status == "failed" and step.used_fallback and "backup boom" in step.error


def test_cancel_from_another_thread_stops_running_and_pending_steps(
    recorder: Any, flow_executor: Any
) -> None:
    started = threading.Event()
    state = {"cancelled": False}

    async def long(query: str) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "never"

    flow = (
        LightFlow(executor=flow_executor)
        .step("long", agent=long)
        .step("after", agent=recorder.agent("after"), depends_on="long")
    )
    box: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: box.setdefault("r", flow.run("q", run_id="c1", trace=True))
    )
    thread.start()
    assert started.wait(5)
    assert flow.cancel("c1", reason="user stop") == 1
    thread.join(10)
    result = box["r"]
    assert result.status == "cancelled" and result.error_code == "LA-CANCELLED"
    assert result.steps["long"].status == "skipped" and result.steps["after"].status == "skipped"
    assert state["cancelled"] and recorder.count("after") == 0
    assert "flow_cancelled" in [e["type"] for e in result.trace]
    assert flow.get_run("c1")["status"] == "cancelled"
    assert flow.cancel("no-such-run") == 0


def test_cancellation_token_stops_the_run(recorder: Any, flow_executor: Any) -> None:
    token = CancellationToken()

    async def first(query: str) -> str:
        token.cancel("enough")
        await asyncio.sleep(5)
        return "x"

    flow = (
        LightFlow(executor=flow_executor)
        .step("a", agent=first)
        .step("b", agent=recorder.agent("b"), depends_on="a")
    )
    result = flow.run("q", cancellation_token=token)
    assert result.status == "cancelled" and "enough" in result.error
    assert recorder.count("b") == 0


def test_max_concurrency_limits_parallel_steps() -> None:
    live = {"now": 0, "max": 0}
    both_in: list[asyncio.Event] = []

    async def tracked(query: str) -> str:
        if not both_in:
            both_in.append(asyncio.Event())
        live["now"] += 1
        live["max"] = max(live["max"], live["now"])
        if live["now"] == 2:
            both_in[0].set()
        # The first step waits for a second one to join it (bounded: a flow that never
        # runs two at once fails the check below instead of hanging).
        try:
            await asyncio.wait_for(both_in[0].wait(), 30)
        except asyncio.TimeoutError:
            pass
        await asyncio.sleep(0.01)  # lingers, so a third step started too early is counted
        live["now"] -= 1
        return "ok"

    flow = LightFlow(max_concurrency=2)
    for i in range(6):
        flow.step(f"s{i}", agent=tracked)
    assert flow.run("q").success
    assert live["max"] == 2


@pytest.mark.parametrize("concurrent_runs", [4])
def test_concurrent_runs_on_one_flow_do_not_share_state(concurrent_runs: int) -> None:
    async def echo(query: str) -> str:
        await asyncio.sleep(0.01)
        return query.upper()

    flow = (
        LightFlow()
        .step("a", agent=echo)
        .step("b", agent=echo, depends_on="a", query=lambda ctx: ctx["outputs"]["a"] + "!")
    )

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(flow.arun(f"q{i}", run_id=f"par-{i}") for i in range(concurrent_runs))
        )

    results = asyncio.run(main())
    assert [r.content for r in results] == [f"Q{i}!" for i in range(concurrent_runs)]


@pytest.mark.parametrize("timeout", [None, 5])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_step_raising_timeouterror_is_an_ordinary_failure_and_is_retried(
    kind: str, timeout: float | None
) -> None:
    calls: list[int] = []

    def sync_step(query: str) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise TimeoutError("the upstream API took too long")
        return "second time"

    async def async_step(query: str) -> str:
        return sync_step(query)

    agent = sync_step if kind == "sync" else async_step
    flow = LightFlow(retry_backoff=0).step("s", agent=agent, timeout=timeout, max_retry=2)
    result = flow.run("q", trace=True)
    step = result.steps["s"]
    assert step.status == "success" and step.content == "second time"
    assert step.attempts == 2 and not step.timed_out and step.timeout_mode is None
    retry = [e["data"]["error"] for e in result.trace if e["type"] == "step_retry"]
    assert len(retry) == 1 and "the upstream API took too long" in retry[0]
    assert "LA-FLOW-TIMEOUT" not in retry[0] and "did not finish" not in retry[0]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_step_that_always_raises_timeouterror_fails_with_its_own_message(kind: str) -> None:
    def sync_step(query: str) -> str:
        raise TimeoutError("socket read timed out")

    async def async_step(query: str) -> str:
        return sync_step(query)

    agent = sync_step if kind == "sync" else async_step
    result = LightFlow(retry_backoff=0).step("s", agent=agent, max_retry=3).run("q")
    step = result.steps["s"]
    assert step.status == "failed" and step.attempts == 3 and not step.timed_out
    assert step.error_code == "LA-408"  # a timeout, classified as any raised exception is
    assert "socket read timed out" in step.error and "within 0s" not in step.error


def test_the_flow_timeout_names_the_configured_limit() -> None:
    async def hangs(query: str) -> str:
        await asyncio.sleep(30)
        return "late"

    result = LightFlow().step("slow", agent=hangs, timeout=0.05).run("q")
    step = result.steps["slow"]
    assert step.error_code == "LA-FLOW-TIMEOUT" and "within 0.05s" in step.error


def test_a_dependant_starts_only_after_its_dependency_is_committed() -> None:
    """B's result is final before its commit returns; C (after A and B) must not start on it
    until the commit is durable, or a crash in between loses an output C already used."""
    from lightagent_flow import MemoryLightFlowStore

    b_committing, a_committed, c_started = threading.Event(), threading.Event(), threading.Event()
    order: list[str] = []

    class SlowCommits(MemoryLightFlowStore):
        blocking = True  # commits run in a worker thread, as on SQL and JSON stores

        def commit_step(
            self, run_id: str, step: dict[str, Any], *, epoch: int | None = None
        ) -> bool:
            if step["name"] == "A":  # A ends while B's commit is in flight
                assert b_committing.wait(30)
            if step["name"] == "B":
                b_committing.set()
                assert a_committed.wait(30)
                # The window in which a scheduler that reads B's status would start C.
                c_started.wait(1.0)
                order.append("B committed")
            result = super().commit_step(run_id, step, epoch=epoch)
            if step["name"] == "A":
                a_committed.set()
            return result

    def c(query: str) -> str:
        order.append("C started")
        c_started.set()
        return "c"

    flow = (
        LightFlow(store=SlowCommits())
        .step("root", agent=lambda q: "r")
        .step("A", agent=lambda q: "a", depends_on="root")
        .step("B", agent=lambda q: "b", depends_on="root")
        .step("C", agent=c, depends_on=["A", "B"])
    )
    result = flow.run("q")
    assert result.success
    assert order == ["B committed", "C started"]
