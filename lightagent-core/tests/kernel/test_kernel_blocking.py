"""run_blocking: blocking calls leave the loop's thread, keep context, never serialise."""

from __future__ import annotations

import asyncio
import contextvars
import multiprocessing
import os
import threading

import pytest
from lightagent.blocking import run_blocking

_who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def test_the_call_runs_off_the_loop_thread_with_the_callers_context() -> None:
    async def main() -> tuple[int, int, str]:
        _who.set("caller")
        here = threading.get_ident()
        there, seen = await run_blocking(lambda: (threading.get_ident(), _who.get()))
        return here, there, seen

    here, there, seen = asyncio.run(main())
    assert here != there
    assert seen == "caller"


def test_arguments_results_and_exceptions_pass_through() -> None:
    def divide(a: int, b: int = 1) -> float:
        return a / b

    async def main() -> float:
        assert await run_blocking(divide, 6, b=3) == 2
        with pytest.raises(ZeroDivisionError):
            await run_blocking(divide, 1, b=0)
        return await run_blocking(divide, 5)

    assert asyncio.run(main()) == 5


def test_concurrent_calls_each_get_a_thread() -> None:
    # Eight calls that can only finish together: a pool that ran them one by one would
    # leave the barrier short and time out.
    barrier = threading.Barrier(8, timeout=10)

    async def main() -> list[int]:
        return list(await asyncio.gather(*(run_blocking(barrier.wait) for _ in range(8))))

    assert sorted(asyncio.run(main())) == list(range(8))


def test_a_cancelled_caller_leaves_the_running_call_to_finish() -> None:
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(10)
        finished.set()
        return "late"

    async def main() -> None:
        task = asyncio.ensure_future(run_blocking(slow))
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        await asyncio.to_thread(finished.wait, 10)
        # The late result was dropped without an error; the threads still serve calls.
        assert await run_blocking(lambda: 1) == 1

    asyncio.run(main())
    assert finished.is_set()


def _child(out: object) -> None:
    value = asyncio.run(run_blocking(os.getpid))
    out.put(value)  # type: ignore[attr-defined]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_threads_of_its_own() -> None:
    # The parent has kept threads; the child inherits none of them and must not wait
    # for one that does not exist.
    asyncio.run(run_blocking(lambda: None))
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    proc = ctx.Process(target=_child, args=(out,))
    proc.start()
    proc.join(30)
    assert proc.exitcode == 0
    assert out.get(timeout=5) == proc.pid


@pytest.mark.skipif(os.name != "posix", reason="the pipe way back is POSIX only")
def test_a_finished_call_wakes_the_loop_through_its_pipe_not_call_soon_threadsafe() -> None:
    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        used: list[object] = []
        plain = loop.call_soon_threadsafe

        def spy(*args: object, **kwargs: object) -> object:
            used.append(args[0])
            return plain(*args, **kwargs)  # type: ignore[arg-type]

        loop.call_soon_threadsafe = spy  # type: ignore[method-assign]
        assert [await run_blocking(lambda i=i: i * 2) for i in range(3)] == [0, 2, 4]
        return used

    assert asyncio.run(main()) == []


class _NoReaders(asyncio.SelectorEventLoop):
    """A loop that cannot watch a file descriptor (as Windows' proactor loop)."""

    def add_reader(self, *args: object, **kwargs: object) -> None:
        raise NotImplementedError


def test_a_loop_that_cannot_watch_a_pipe_still_gets_results_and_errors() -> None:
    async def main() -> str:
        _who.set("caller")
        with pytest.raises(ZeroDivisionError):
            await run_blocking(lambda: 1 / 0)
        return await run_blocking(_who.get)

    loop = _NoReaders()
    try:
        assert loop.run_until_complete(main()) == "caller"
    finally:
        loop.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_finished_loops_leave_no_descriptor_open() -> None:
    import gc

    def open_fds() -> int:
        gc.collect()
        return len(os.listdir("/proc/self/fd"))

    asyncio.run(run_blocking(lambda: None))  # threads and imports settled first
    before = open_fds()
    for _ in range(20):
        asyncio.run(run_blocking(lambda: None))
    assert open_fds() <= before


@pytest.mark.skipif(os.name != "posix", reason="the pipe way back is POSIX only")
def test_a_full_wake_pipe_loses_no_result() -> None:
    from lightagent.blocking import loop_delivery

    # More finished calls than the pipe holds bytes, delivered while the loop is not
    # running: the writes past its capacity are dropped, every result still arrives.
    loop = asyncio.new_event_loop()
    try:
        futures = [loop.create_future() for _ in range(70_000)]
        ways = [loop_delivery(loop, f) for f in futures]
        worker = threading.Thread(
            target=lambda: [deliver(token, i, None) for i, (deliver, token) in enumerate(ways)]
        )
        worker.start()
        worker.join(60)
        values = loop.run_until_complete(asyncio.gather(*futures))
        assert values == list(range(70_000))
    finally:
        loop.close()


def test_a_thread_lane_reports_through_deliver_on_its_own_threads() -> None:
    import queue

    from lightagent.blocking import ThreadLane

    lane = ThreadLane("test-lane", 2)
    done: queue.SimpleQueue = queue.SimpleQueue()

    def deliver(token: str, result: object, exc: BaseException | None) -> None:
        done.put((token, result, exc, threading.current_thread().name))

    _who.set("submitter")
    lane.submit(lambda a, b=0: (a + b, _who.get()), (1,), {"b": 2}, deliver, "ok")
    lane.submit(lambda: 1 / 0, (), {}, deliver, "bad")
    got = {
        token: (result, exc, name)
        for token, result, exc, name in (done.get(timeout=10), done.get(timeout=10))
    }
    assert got["ok"] == ((3, "submitter"), None, "test-lane")
    assert got["bad"][0] is None and isinstance(got["bad"][1], ZeroDivisionError)
    lane.close()
    with pytest.raises(RuntimeError, match="closed"):
        lane.submit(lambda: None, (), {}, deliver, "late")
