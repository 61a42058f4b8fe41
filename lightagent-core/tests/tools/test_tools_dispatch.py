"""AsyncToolDispatcher: concurrency, timeouts, errors as short text, output shapes, drivers."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

import pytest
from lightagent.errors import ConfigurationError, ToolError
from lightagent.models.base import ToolCall
from lightagent.tools import AsyncToolDispatcher, ToolRegistry, tool
from lightagent.tools.dispatch import ToolOutcome


@tool
def nap(seconds: float, label: str = "") -> str:
    """Sleep in a thread."""
    time.sleep(seconds)
    return f"napped {label}"


@tool
async def anap(seconds: float, label: str = "") -> dict:
    """Sleep on the loop."""
    await asyncio.sleep(seconds)
    return {"label": label, "thread": threading.current_thread().name}


STUCK_RELEASE, STUCK_RETURNED = threading.Event(), threading.Event()


@tool(timeout=0.2)
def stuck(release: str = "") -> str:
    """Blocks longer than its timeout (until the test releases it)."""
    STUCK_RELEASE.wait(30)
    STUCK_RETURNED.set()
    return "late"


cancelled_flags: list[str] = []


@tool(timeout=0.2)
async def astuck() -> str:
    """Async, longer than its timeout."""
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:
        cancelled_flags.append("cancelled")
        raise
    return "late"


@tool
def explode(when: str) -> str:
    """Raises."""
    raise ValueError(f"bad date {when}\n  File 'secret.py', line 1")


@tool
def nothing() -> None:
    """Returns None."""


@tool
def listing(n: int) -> list:
    """Returns a list."""
    return [{"i": i, "name": "ü"} for i in range(n)]


@tool
def pieces(n: int):
    """Sync generator."""
    for i in range(n):
        yield f"{i};"


@tool
async def apieces(n: int):
    """Async generator."""
    for i in range(n):
        await asyncio.sleep(0)
        yield {"i": i}


@tool
def with_key(amount: int, idempotency_key: str) -> str:
    """Echoes its idempotency key."""
    return idempotency_key


@dataclass
class Token:
    cancelled: bool = False
    reason: str | None = None


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    return ToolRegistry(
        [nap, anap, stuck, astuck, explode, nothing, listing, pieces, apieces, with_key]
    )


@pytest.fixture(scope="module")
def dispatcher(registry) -> AsyncToolDispatcher:
    return AsyncToolDispatcher(registry, default_timeout=10)


def call(name: str, arguments: str = "{}", call_id: str | None = None) -> ToolCall:
    return ToolCall(id=call_id or f"id_{name}", name=name, arguments=arguments)


def test_sync_tools_run_concurrently_in_threads():
    together = threading.Barrier(5, timeout=30)

    @tool
    def meet(label: str) -> str:
        """Naps once all five calls run at once."""
        together.wait()  # BrokenBarrierError (an error outcome) unless the five run at once
        time.sleep(0.3)
        return f"napped {label}"

    dispatcher = AsyncToolDispatcher(ToolRegistry([meet]), default_timeout=60)
    calls = [call("meet", f'{{"label": "{i}"}}', f"c{i}") for i in range(5)]
    outcomes = dispatcher.run_calls(calls)
    assert [o.output for o in outcomes] == [f"napped {i}" for i in range(5)]
    assert [o.call_id for o in outcomes] == [f"c{i}" for i in range(5)]
    assert all(o.ok and o.latency_ms >= 250 for o in outcomes)


def test_async_driver_keeps_the_loop_free_while_sync_tools_run():
    lock = threading.Lock()
    blocking = {"now": 0}
    all_blocking, loop_ticked = threading.Event(), threading.Event()
    ticks = []

    @tool
    def block() -> str:
        """Holds its thread until the loop has ticked while all five sync calls block."""
        with lock:
            blocking["now"] += 1
            if blocking["now"] == 5:
                all_blocking.set()
        return "ticked" if loop_ticked.wait(30) else "the loop stood still"

    async def heartbeat():
        await asyncio.to_thread(all_blocking.wait, 30)
        for _ in range(8):  # the five sync calls block their threads all along
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.02)
        loop_ticked.set()

    dispatcher = AsyncToolDispatcher(ToolRegistry([block, anap]), default_timeout=60)

    async def main():
        beat = asyncio.ensure_future(heartbeat())
        calls = [call("block", "{}", f"s{i}") for i in range(5)]
        calls += [call("anap", f'{{"seconds": 0.3, "label": "a{i}"}}', f"a{i}") for i in range(3)]
        outcomes = await dispatcher.arun_calls(calls)
        beat.cancel()
        return outcomes, threading.current_thread().name

    try:
        outcomes, loop_thread = asyncio.run(main())
    finally:
        loop_ticked.set()  # frees the threads of a failed run
    assert [o.output for o in outcomes][:5] == ["ticked"] * 5
    assert len(ticks) == 8  # the loop kept ticking while every sync tool blocked
    assert [o.call_id for o in outcomes][-3:] == ["a0", "a1", "a2"]
    assert (
        f'"thread": "{loop_thread}"' in outcomes[-1].output
    )  # async tools run on the caller's loop


def test_sync_timeout_is_reported_and_the_call_abandoned(dispatcher):
    STUCK_RELEASE.clear()
    STUCK_RETURNED.clear()
    try:
        [outcome] = dispatcher.run_calls([call("stuck")])
        assert not STUCK_RETURNED.is_set()  # returned while the tool still blocks its thread
    finally:
        STUCK_RELEASE.set()
    assert outcome.error.code == "LA-TOOL-TIMEOUT"
    assert outcome.output.startswith(
        "Error [LA-TOOL-TIMEOUT] tool `stuck` did not finish within 0.2s"
    )
    assert "abandoned" in outcome.output


def test_async_timeout_really_cancels(dispatcher):
    cancelled_flags.clear()
    [outcome] = asyncio.run(dispatcher.arun_calls([call("astuck")]))
    assert outcome.error.code == "LA-TOOL-TIMEOUT" and "cancelled" in outcome.output
    assert cancelled_flags == ["cancelled"]


def test_default_timeout_applies_to_tools_without_one(registry):
    fast = AsyncToolDispatcher(registry, default_timeout=0.1)
    [outcome] = fast.run_calls([call("nap", '{"seconds": 0.5}')])
    assert outcome.error.code == "LA-TOOL-TIMEOUT"
    [outcome] = asyncio.run(fast.arun_calls([call("anap", '{"seconds": 0.5}')]))
    assert outcome.error.code == "LA-TOOL-TIMEOUT"


def test_a_sync_tool_raising_timeout_error_is_its_own_error_not_a_timeout():
    @tool
    def gives_up() -> str:
        """Fails with the builtin TimeoutError (a socket timeout, say)."""
        raise TimeoutError("upstream did not answer")

    d = AsyncToolDispatcher(ToolRegistry([gives_up]), default_timeout=10)
    for outcomes in (
        d.run_calls([call("gives_up")]),
        asyncio.run(d.arun_calls([call("gives_up")])),
    ):
        [outcome] = outcomes
        assert outcome.error.code == "LA-TOOL"
        assert outcome.output == "Error [LA-TOOL] TimeoutError: upstream did not answer"


def test_sync_tools_run_on_kept_threads_of_their_own(dispatcher):
    @tool
    def where() -> str:
        """The thread it runs on."""
        return threading.current_thread().name

    d = AsyncToolDispatcher(ToolRegistry([where]), default_timeout=10)
    names = {d.run_calls([call("where")])[0].output for _ in range(5)}
    names |= {asyncio.run(d.arun_calls([call("where")]))[0].output for _ in range(5)}
    # Not the store threads of run_blocking: a hung tool never holds up a commit.
    assert names == {"lightagent-tool"}


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_call_given_up_before_a_thread_took_it_never_runs(driver):
    ran: list[str] = []
    release = threading.Event()

    @tool(timeout=0.2)
    def hog() -> str:
        """Holds the only thread past its timeout."""
        release.wait(5)
        return "late"

    @tool(timeout=0.2)
    def queued() -> str:
        """Waits behind hog for the only thread."""
        ran.append("queued")
        return "ran"

    d = AsyncToolDispatcher(ToolRegistry([hog, queued]), max_workers=1)
    calls = [call("hog", "{}", "h"), call("queued", "{}", "q")]
    try:
        if driver == "sync":
            outcomes = d.run_calls(calls)
        else:
            outcomes = asyncio.run(d.arun_calls(calls))
        assert [o.error.code for o in outcomes] == ["LA-TOOL-TIMEOUT"] * 2
        release.set()
        # The thread is free again: the next call runs, the abandoned one never did.
        [after] = d.run_calls([call("queued", "{}", "again")])
        assert after.output == "ran" and ran == ["queued"]
    finally:
        release.set()
        d.close()


def test_exceptions_reach_the_model_as_one_short_line(dispatcher):
    for outcomes in (
        dispatcher.run_calls([call("explode", '{"when": "tomorrow"}')]),
        asyncio.run(dispatcher.arun_calls([call("explode", '{"when": "tomorrow"}')])),
    ):
        [outcome] = outcomes
        assert outcome.output.startswith("Error [LA-TOOL] ValueError: bad date tomorrow")
        assert "\n" not in outcome.output and "Traceback" not in outcome.output
        assert isinstance(outcome.error, ToolError) and outcome.error.code == "LA-TOOL"
        assert isinstance(outcome.error.__cause__, ValueError)  # kept for logs, not for the model
        assert outcome.arguments == {"when": "tomorrow"}


def test_unknown_tool_and_bad_arguments(dispatcher):
    outcomes = dispatcher.run_calls(
        [
            call("ghost"),
            call("nap", '{"seconds": "soon"}', "x"),
            call("nap", "{oops", "y"),
            call("nap", "[]", "z"),
        ]
    )
    assert outcomes[0].error.code == "LA-TOOL-NOT-FOUND" and "available:" in outcomes[0].output
    assert [o.error.code for o in outcomes[1:]] == ["LA-TOOL-ARGS"] * 3
    assert "`seconds`" in outcomes[1].output
    assert outcomes[1].arguments == {"seconds": "soon"}
    assert "not valid JSON" in outcomes[2].output


def test_output_shapes(dispatcher):
    calls = [
        call("nothing"),
        call("listing", '{"n": 2}'),
        call("pieces", '{"n": 3}'),
        call("apieces", '{"n": 2}'),
    ]
    expected = [
        "(no output)",
        '[{"i": 0, "name": "ü"}, {"i": 1, "name": "ü"}]',
        "0;1;2;",
        '{"i": 0}\n{"i": 1}',
    ]
    assert [o.output for o in dispatcher.run_calls(calls)] == expected
    assert [o.output for o in asyncio.run(dispatcher.arun_calls(calls))] == expected


def test_cancelled_run_runs_no_further_tool(dispatcher):
    ran = []

    @tool
    def record(x: int) -> str:
        """Record."""
        ran.append(x)
        return "ok"

    reg = ToolRegistry([record])
    token = Token(cancelled=True, reason="user pressed stop")
    outcomes = dispatcher.run_calls([call("record", '{"x": 1}')], cancellation=token, registry=reg)
    outcomes += asyncio.run(
        dispatcher.arun_calls([call("record", '{"x": 2}')], cancellation=token, registry=reg)
    )
    assert ran == []
    assert all(o.error.code == "LA-CANCELLED" for o in outcomes)
    assert "user pressed stop" in outcomes[0].output
    assert dispatcher.run_calls([call("record", '{"x": 3}')], cancellation=Token(), registry=reg)[
        0
    ].ok
    assert ran == [3]


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_call_waiting_for_a_thread_sees_the_cancellation(driver):
    ran: list[str] = []
    token = Token()

    @tool
    def first() -> str:
        """Cancels the run once the second call waits for the only thread."""
        ran.append("first")
        time.sleep(0.05)
        token.cancelled, token.reason = True, "user pressed abort"
        return "first done"

    @tool
    def second() -> str:
        """Would run after first on the same thread."""
        ran.append("second")
        return "second done"

    d = AsyncToolDispatcher(ToolRegistry([first, second]), max_workers=1)
    calls = [call("first", "{}", "f"), call("second", "{}", "s")]
    try:
        if driver == "sync":
            outcomes = d.run_calls(calls, cancellation=token)
        else:
            outcomes = asyncio.run(d.arun_calls(calls, cancellation=token))
    finally:
        d.close()
    assert ran == ["first"]
    assert outcomes[0].output == "first done"
    assert outcomes[1].error.code == "LA-CANCELLED"
    assert outcomes[1].output == (
        "Error [LA-CANCELLED] not run: the run was cancelled (user pressed abort)"
    )


def test_idempotency_keys_are_injected(dispatcher):
    [given] = dispatcher.run_calls(
        [call("with_key", '{"amount": 1}', "k1")], idempotency_keys={"k1": "key-abc"}
    )
    assert given.output == "key-abc"
    [derived] = dispatcher.run_calls([call("with_key", '{"amount": 1}', "k2")])
    assert len(derived.output) == 64  # a sha256 fallback, stable per call
    assert (
        dispatcher.run_calls([call("with_key", '{"amount": 1}', "k2")])[0].output == derived.output
    )
    [forged] = dispatcher.run_calls([call("with_key", '{"amount": 1, "idempotency_key": "x"}')])
    assert forged.error.code == "LA-TOOL-ARGS"


def test_sync_driver_without_async_tools_creates_no_event_loop(dispatcher, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an event loop was created")

    monkeypatch.setattr(asyncio, "new_event_loop", refuse)
    monkeypatch.setattr(asyncio, "run", refuse)
    outcomes = dispatcher.run_calls(
        [call("nap", '{"seconds": 0}', "a"), call("pieces", '{"n": 1}', "b")]
    )
    assert [o.output for o in outcomes] == ["napped ", "0;"]


def test_sync_driver_inside_a_running_loop_runs_async_tools(dispatcher):
    async def handler():
        # e.g. a Jupyter cell or a FastAPI handler calling the sync API
        return dispatcher.run_calls(
            [call("anap", '{"seconds": 0.01, "label": "x"}'), call("nap", '{"seconds": 0}')]
        )

    outcomes = asyncio.run(handler())
    assert '"label": "x"' in outcomes[0].output and outcomes[1].output == "napped "
    assert "lightagent-tools-loop" in outcomes[0].output  # ran on the background loop thread


def test_calls_as_dicts_and_seeds_dispatch(dispatcher):
    outcomes = dispatcher.run_calls(
        [
            {"id": "d1", "function": {"name": "listing", "arguments": '{"n": 1}'}},
            {"id": "d2", "name": "listing", "arguments": {"n": 0}},
        ]
    )
    assert [o.output for o in outcomes] == ['[{"i": 0, "name": "ü"}]', "[]"]
    assert asyncio.run(dispatcher.dispatch("listing", {"n": 0})) == "[]"
    assert outcomes[0].to_message() == {
        "role": "tool",
        "tool_call_id": "d1",
        "content": outcomes[0].output,
    }
    with pytest.raises(ToolError):
        dispatcher.run_calls([42])


def test_max_output_chars_truncates(registry):
    small = AsyncToolDispatcher(registry, max_output_chars=10)
    [outcome] = small.run_calls([call("listing", '{"n": 5}')])
    assert outcome.output.startswith('[{"i": 0, ') and "[truncated" in outcome.output


def test_private_pool_and_close(registry):
    own = AsyncToolDispatcher(registry, max_workers=2)
    assert own.run_calls([call("nap", '{"seconds": 0}', "a"), call("nap", '{"seconds": 0}', "b")])[
        1
    ].ok
    own.close()
    own.close()  # idempotent


def test_a_dropped_dispatcher_lets_its_private_threads_end(registry):
    import gc

    before = set(threading.enumerate())
    own = AsyncToolDispatcher(registry, max_workers=2)
    calls = [call("nap", '{"seconds": 0.05}', "a"), call("nap", '{"seconds": 0.05}', "b")]
    assert all(o.ok for o in own.run_calls(calls))
    started = set(threading.enumerate()) - before
    assert started and all(t.name == "lightagent-tool" for t in started)
    del own
    gc.collect()
    for thread in started:
        thread.join(5)
    assert not any(t.is_alive() for t in started)


@pytest.mark.parametrize("bad", [0, -1, "60"])
def test_bad_default_timeout(registry, bad):
    with pytest.raises(ConfigurationError) as info:
        AsyncToolDispatcher(registry, default_timeout=bad)
    assert info.value.code == "LA-CONFIG"


def test_outcome_shape():
    outcome = ToolOutcome("c", "n", "out")
    assert (
        outcome.ok
        and outcome.error is None
        and outcome.latency_ms == 0.0
        and outcome.arguments is None
    )


def test_a_tool_calling_sys_exit_does_not_end_the_host():
    import sys

    @tool
    def quitter() -> str:
        """Exits."""
        sys.exit(3)

    @tool
    async def aquitter() -> str:
        """Exits, async."""
        sys.exit(4)

    d = AsyncToolDispatcher(ToolRegistry([quitter, aquitter]))
    calls = [call("quitter"), call("aquitter")]
    for outcomes in (d.run_calls(calls), asyncio.run(d.arun_calls(calls))):
        assert [o.output for o in outcomes] == [
            "Error [LA-TOOL] SystemExit: 3",
            "Error [LA-TOOL] SystemExit: 4",
        ]


def _gated_registry():
    gate = threading.Event()
    heard: list[str] = []

    @tool
    def quick() -> str:
        """Returns at once."""
        return "quick"

    @tool
    def waits_for_quick() -> str:
        """Returns only once the dispatcher has reported `quick`."""
        return "saw quick" if gate.wait(5) else "never saw quick"

    @tool
    async def awaits_for_quick() -> str:
        """Async form of waits_for_quick."""
        for _ in range(500):
            if gate.is_set():
                return "saw quick"
            await asyncio.sleep(0.01)
        return "never saw quick"

    def on_outcome(outcome: ToolOutcome) -> None:
        heard.append(outcome.call_id)
        if outcome.name == "quick":
            gate.set()

    return ToolRegistry([quick, waits_for_quick, awaits_for_quick]), heard, on_outcome


@pytest.mark.parametrize("slow", ["waits_for_quick", "awaits_for_quick"])
def test_each_outcome_is_reported_the_moment_it_is_known(slow):
    reg, heard, on_outcome = _gated_registry()
    dispatcher = AsyncToolDispatcher(reg, default_timeout=10)
    # The slow call comes first: call order would report it first, and it never ends
    # before the quick one has been reported.
    outcomes = dispatcher.run_calls(
        [call(slow, "{}", "s"), call("quick", "{}", "q")], on_outcome=on_outcome
    )
    assert [o.output for o in outcomes] == ["saw quick", "quick"]
    assert heard == ["q", "s"]


def test_async_outcomes_are_reported_one_at_a_time_as_they_finish():
    reg, heard, on_outcome = _gated_registry()
    dispatcher = AsyncToolDispatcher(reg, default_timeout=10)
    inside = []

    async def aon_outcome(outcome: ToolOutcome) -> None:
        inside.append(outcome.call_id)
        assert len(inside) == 1  # never two at once
        await asyncio.sleep(0.01)
        on_outcome(outcome)
        inside.remove(outcome.call_id)

    calls = [
        call("awaits_for_quick", "{}", "s"),
        call("quick", "{}", "q"),
        call("quick", "{}", "q2"),
    ]
    outcomes = asyncio.run(dispatcher.arun_calls(calls, on_outcome=aon_outcome))
    assert [o.output for o in outcomes] == ["saw quick", "quick", "quick"]
    assert heard[-1] == "s" and set(heard) == {"s", "q", "q2"}


def test_timed_out_calls_are_reported_and_a_crash_still_reports_the_finished_ones():
    heard = []
    release = threading.Event()

    @tool(timeout=2.0)
    def held() -> str:
        """Blocks past its timeout, which the quick call beats even on a loaded machine."""
        release.wait(30)
        return "late"

    try:
        outcomes = AsyncToolDispatcher(ToolRegistry([held, nap]), default_timeout=10).run_calls(
            [call("held", "{}", "late"), call("nap", '{"seconds": 0.01}', "n")],
            on_outcome=lambda o: heard.append((o.call_id, o.error.code if o.error else None)),
        )
    finally:
        release.set()
    assert heard == [("n", None), ("late", "LA-TOOL-TIMEOUT")]
    assert outcomes[0].error.code == "LA-TOOL-TIMEOUT"

    class Crash(BaseException):
        pass

    returned = threading.Event()

    @tool
    def returns() -> str:
        """Finishes first."""
        returned.set()
        return "ok"

    @tool
    def dies() -> str:
        """Stands in for the process dying once the other call's return was reported (the
        wait is bounded: a dispatcher holding it back fails the check below)."""
        returned.wait(30)
        deadline = time.monotonic() + 30
        while ("n", None) not in heard and time.monotonic() < deadline:
            time.sleep(0.01)
        raise Crash()

    reg = ToolRegistry([dies, returns])
    heard.clear()
    with pytest.raises(Crash):
        AsyncToolDispatcher(reg, default_timeout=10).run_calls(
            [call("dies", "{}", "d"), call("returns", "{}", "n")],
            on_outcome=lambda o: heard.append((o.call_id, None)),
        )
    assert heard == [("n", None)]
