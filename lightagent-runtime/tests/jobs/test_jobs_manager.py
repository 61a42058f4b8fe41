"""Background jobs in the session log: started, leased, heartbeated, with output readable by
others while they run, cancellation, results awaited from another manager, fencing of a
stale holder, takeover without repeating recorded steps — on SQLite files and PostgreSQL."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from lightagent.errors import ConfigurationError, LightAgentError, ValidationError
from lightagent.events.model import SessionEvent
from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore
from lightagent_runtime.jobs import JobError, JobFencedError, JobManager, JobStatus


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request, tmp_path) -> Callable[[], Any]:
    """Opens a new store object on one shared database (as separate processes would)."""
    if request.param == "sqlite":
        return lambda: SqliteSessionStore(tmp_path / "jobs.sqlite3")
    url = request.getfixturevalue("postgres_url")
    prefix = f"jobs{uuid.uuid4().hex[:8]}_"
    return lambda: SqlSessionStore(url, table_prefix=prefix)


def manager(open_store, **kw) -> JobManager:
    return JobManager(open_store(), "s1", poll_interval=0.02, **kw)


def types(store, session_id="s1") -> list[str]:
    return [e.type for e in store.events(session_id)]


def test_a_job_runs_records_output_and_steps_and_another_manager_awaits_it(
    open_store, job_executor
) -> None:
    charged: list[str] = []
    may_finish = asyncio.Event

    async def main() -> None:
        jobs = manager(open_store, executor=job_executor)
        reader = manager(open_store, executor=job_executor)
        release = may_finish()

        async def invoice(ctx) -> dict:
            def charge(order: str) -> dict:
                charged.append(order)
                return {"charged": order, "key": ctx.idempotency_key("charge")}

            receipt = await ctx.step("charge", charge, ctx.arguments["order"])
            await ctx.emit_output({"progress": 50})
            await release.wait()
            # a step already recorded returns its result without running again
            assert await ctx.step("charge", charge, "other") == receipt
            return {"receipt": receipt}

        record = jobs.start("invoice", invoice, arguments={"order": "o-7"}, metadata={"k": 1})
        assert record.status is JobStatus.pending and record.session_id == "s1"
        # another manager (another store object) sees the job running and its output so far
        for _ in range(6000):  # up to a minute
            seen = await reader.refresh()
            if seen and seen[0].output:
                break
            await asyncio.sleep(0.01)
        running = reader.get(record.job_id)
        assert running.status is JobStatus.running and running.output == [{"progress": 50}]
        assert running.lease_owner == jobs.worker_id and running.lease_epoch == 1
        if job_executor is None:
            assert running.lease_expires_at > time.time() and running.executor is None
        else:  # the executor owns the job: no lease to expire, no takeover
            assert running.lease_expires_at is None and running.executor == "dbos"
        assert running.steps["charge"]["charged"] == "o-7"
        release.set()
        done = await reader.wait(record.job_id, timeout=30)
        assert done.status is JobStatus.success and done.done
        assert done.result == {"receipt": {"charged": "o-7", "key": f"{record.job_id}:charge"}}
        assert done.arguments == {"order": "o-7"} and done.metadata == {"k": 1}
        assert done.attempts == 1 and done.lease_owner is None
        assert (await jobs.wait(record.job_id)).result == done.result

    asyncio.run(main())
    assert charged == ["o-7"]
    store = open_store()
    kinds = types(store)
    assert kinds[:3] == ["session.started", "job.created", "job.started"]
    assert kinds[-2:] == ["job.completed", "inbox.enqueued"]
    # the completion reaches the session's next run through the inbox, as a context message
    message = store.events("s1")[-1].data
    assert message["message_type"] == "context"
    assert message["metadata"]["kind"] == "job_completion"
    assert message["metadata"]["job"]["status"] == "success"
    assert "invoice" in message["content"]


def test_an_idempotency_key_starts_one_job_and_a_sync_operation_runs_in_a_thread(
    open_store, job_executor
):
    calls: list[str] = []

    def report(ctx) -> str:  # sync: run in a worker thread, never on the loop
        calls.append(threading.current_thread().name)
        return "ok"

    async def main() -> None:
        jobs = manager(open_store, executor=job_executor)
        first = jobs.start("report", report, idempotency_key="nightly")
        done = await jobs.wait(first.job_id, timeout=30)
        again = manager(open_store, executor=job_executor)
        again.register("report", report)
        second = again.start("report", idempotency_key="nightly")
        assert second.job_id == first.job_id
        assert (await again.wait(second.job_id, timeout=30)).result == done.result == "ok"

    asyncio.run(main())
    assert len(calls) == 1 and calls[0] != threading.main_thread().name
    assert types(open_store()).count("job.created") == 1


def test_a_failing_job_is_recorded_failed_with_its_error(open_store, job_executor) -> None:
    async def broken(ctx) -> None:
        raise RuntimeError("disk full")

    async def main():
        jobs = manager(open_store, executor=job_executor)
        return await jobs.wait(jobs.start("broken", broken).job_id, timeout=30)

    record = asyncio.run(main())
    assert record.status is JobStatus.failed
    assert record.error["type"] == "RuntimeError" and "disk full" in record.error["message"]
    assert open_store().events("s1")[-1].data["metadata"]["job"]["status"] == "failed"


def test_cancel_is_cooperative_here_and_through_the_log_from_another_manager(
    open_store, job_executor
) -> None:
    async def patient(ctx) -> str:
        # the token is thread-safe: wait for it off the loop
        assert await asyncio.to_thread(ctx.cancellation_token.wait, 30)
        ctx.cancellation_token.raise_if_cancelled()
        return "never"

    async def main() -> None:
        jobs = manager(open_store, executor=job_executor)
        other = manager(open_store, executor=job_executor)
        here = jobs.start("patient", patient)
        there = jobs.start("patient", patient)
        await jobs.recorded(there.job_id)  # in the log, for the other manager to find
        assert jobs.cancellation_token(here.job_id).cancelled is False
        await jobs.cancel(here.job_id, "not needed")
        # from another manager: a recorded request the holder reads at its next tick
        await other.refresh()
        requested = await other.cancel(there.job_id, "user pressed stop")
        assert requested.cancel_requested == "user pressed stop"
        a = await other.wait(here.job_id, timeout=30)
        b = await other.wait(there.job_id, timeout=30)
        assert (a.status, b.status) == (JobStatus.cancelled, JobStatus.cancelled)
        assert a.error["code"] == b.error["code"] == "LA-CANCELLED"
        assert b.error["message"].endswith("user pressed stop")
        # cancelling an ended job changes nothing
        assert (await other.cancel(here.job_id)).status is JobStatus.cancelled
        # the manager that ran them waits for their operations to stop (on DBOS the end
        # is recorded before: the cancel records it, then stops the workflow)
        for job in (here, there):
            assert (await jobs.wait(job.job_id, timeout=30)).status is JobStatus.cancelled

    asyncio.run(main())
    store = open_store()
    assert types(store).count("job.cancelled") == 2
    assert types(store).count("job.cancel_requested") == 2


def forge_dead_holder(store, job_id: str, name: str, *, steps: dict | None = None) -> None:
    """A job whose worker died: created, started at epoch 1 under a lease now expired."""
    events = [
        SessionEvent("job.created", data={"job_id": job_id, "name": name, "arguments": {"n": 3}}),
        SessionEvent(
            "job.started",
            data={
                "job_id": job_id,
                "lease_owner": "dead-worker",
                "lease_epoch": 1,
                "lease_expires_at": time.time() - 1,
                "lease_seconds": 1,
            },
        ),
    ]
    for step, result in (steps or {}).items():
        events.append(
            SessionEvent(
                "job.step",
                data={"job_id": job_id, "step": step, "result": result, "lease_epoch": 1},
            )
        )
    store.append("s1", events)


def test_takeover_runs_the_job_again_without_repeating_its_recorded_steps(open_store) -> None:
    ran: list[str] = []
    forge_dead_holder(open_store(), "j1", "ship", steps={"charge": {"id": "ch_1"}})

    async def ship(ctx) -> dict:
        charge = await ctx.step("charge", lambda: ran.append("charge") or {"id": "ch_2"})
        label = await ctx.step("label", lambda: ran.append("label") or "L-1")
        return {"charge": charge, "label": label, "attempt": ctx.attempt, "n": ctx.arguments["n"]}

    async def main() -> None:
        jobs = manager(open_store)
        await jobs.refresh()
        assert jobs.get("j1").lease_expired()
        # a worker without the operation registered leaves it alone
        assert await jobs.take_over() == []
        jobs.register("ship", ship)
        rival = manager(open_store)
        rival.register("ship", ship)
        taken = await jobs.take_over()
        assert [r.job_id for r in taken] == ["j1"] and taken[0].lease_epoch == 2
        # the live lease refuses a second taker
        with pytest.raises(JobError) as info:
            await rival.resume("j1")
        assert info.value.code == "LA-JOB-STATE"
        done = await rival.wait("j1", timeout=30)
        assert done.result == {"charge": {"id": "ch_1"}, "label": "L-1", "attempt": 2, "n": 3}
        assert done.attempts == 2 and done.lease_epoch == 2

    asyncio.run(main())
    assert ran == ["label"]  # the recorded charge was not made again


def test_a_takeover_writes_each_output_position_once(open_store) -> None:
    """The dead holder emitted its first output; the takeover runs the operation from the
    start and emits it again: only the outputs past what was recorded are written."""
    store = open_store()
    forge_dead_holder(store, "j1", "report", steps={"scan": 40})
    store.append(
        "s1",
        [SessionEvent("job.output", data={"job_id": "j1", "value": "scanned 40", "index": 0})],
    )

    async def report(ctx) -> str:
        found = await ctx.step("scan", lambda: 41)
        await ctx.emit_output(f"scanned {found}")  # position 0: recorded by the dead holder
        await ctx.emit_output("written")  # position 1: new
        return "done"

    async def main() -> Any:
        jobs = manager(open_store)
        jobs.register("report", report)
        await jobs.refresh()
        await jobs.resume("j1")
        return await jobs.wait("j1", timeout=30)

    done = asyncio.run(main())
    assert done.attempts == 2 and done.output == ["scanned 40", "written"]
    assert types(open_store()).count("job.output") == 2


def test_a_stale_holder_is_fenced_and_stops_when_its_job_is_taken_over(open_store) -> None:
    async def main() -> None:
        jobs = manager(open_store)
        started = asyncio.Event()

        async def long(ctx) -> str:
            started.set()
            assert await asyncio.to_thread(ctx.cancellation_token.wait, 30)
            await ctx.emit_output("late")  # a write after losing the lease: refused
            return "late"

        record = jobs.start("long", long, lease_seconds=30)
        await started.wait()
        token = jobs.cancellation_token(record.job_id)
        # another worker takes the job over (as if this one had been presumed dead)
        open_store().append(
            "s1",
            [
                SessionEvent(
                    "job.resumed",
                    data={
                        "job_id": record.job_id,
                        "lease_owner": "worker-2",
                        "lease_epoch": 2,
                        "lease_expires_at": time.time() + 60,
                        "lease_seconds": 60,
                    },
                )
            ],
        )
        # the heartbeat sees the newer epoch and cancels the job's token; its writes fail
        for _ in range(6000):  # up to a minute
            if token.cancelled:
                break
            await asyncio.sleep(0.01)
        assert token.reason == "the job's lease was taken over"
        with pytest.raises(JobFencedError) as info:
            await jobs.renew_lease(record.job_id, 10, owner=jobs.worker_id, expected_epoch=1)
        assert info.value.code == "LA-JOB-FENCED"
        assert info.value.details["current_epoch"] == 2
        for _ in range(6000):  # up to a minute
            if record.job_id not in jobs._local:
                break
            await asyncio.sleep(0.01)
        assert jobs.get(record.job_id).status is JobStatus.running  # under worker-2

    asyncio.run(main())
    kinds = types(open_store())
    assert "job.output" not in kinds and "job.completed" not in kinds


def test_a_closed_worker_leaves_its_jobs_interrupted_for_another_to_take_over(open_store) -> None:
    counted: list[int] = []

    async def count(ctx) -> int:
        n = await ctx.step("first", lambda: counted.append(1) or 1)
        if ctx.attempt == 1:
            await asyncio.sleep(3600)  # the worker closes meanwhile
        return n + 1

    async def main() -> None:
        jobs = manager(open_store)
        record = jobs.start("count", count, lease_seconds=30)
        for _ in range(6000):  # up to a minute
            if any(r.steps for r in await jobs.refresh()):
                break
            await asyncio.sleep(0.01)
        await jobs.aclose()
        other = manager(open_store)
        other.register("count", count)
        await other.refresh()
        assert other.get(record.job_id).status is JobStatus.interrupted
        # interrupted: no lease to wait out
        await other.resume(record.job_id)
        assert (await other.wait(record.job_id, timeout=30)).result == 2

    asyncio.run(main())
    assert counted == [1]


def test_starting_an_interrupted_job_again_by_its_key_takes_it_over(open_store) -> None:
    ran: list[int] = []

    async def once(ctx) -> int:
        first = await ctx.step("first", lambda: ran.append(ctx.attempt) or ctx.attempt)
        if ctx.attempt == 1:
            await asyncio.sleep(3600)  # the worker closes meanwhile
        return first

    async def main() -> None:
        jobs = manager(open_store)
        record = jobs.start("once", once, idempotency_key="k")
        for _ in range(6000):  # up to a minute
            if any(r.steps for r in await jobs.refresh()):
                break
            await asyncio.sleep(0.01)
        await jobs.aclose()
        again = manager(open_store)
        second = again.start("once", once, idempotency_key="k")
        assert second.job_id == record.job_id
        done = await again.wait(second.job_id, timeout=30)
        assert (done.status, done.result, done.attempts) == (JobStatus.success, 1, 2)
        assert done.cancellation_token_id != record.cancellation_token_id

    asyncio.run(main())
    assert ran == [1]


def test_mark_interrupted_records_expired_leases_and_cancel_ends_them(open_store) -> None:
    forge_dead_holder(open_store(), "j2", "ship")

    async def main() -> None:
        jobs = manager(open_store)
        marked = await jobs.mark_interrupted()
        assert [r.job_id for r in marked] == ["j2"]
        assert jobs.get("j2").status is JobStatus.interrupted
        assert await jobs.mark_interrupted() == []
        assert (await jobs.cancel("j2", "obsolete")).status is JobStatus.cancelled
        assert (await jobs.wait("j2", timeout=5)).status is JobStatus.cancelled

    asyncio.run(main())


def test_bad_input_gets_typed_errors(open_store) -> None:
    forge_dead_holder(open_store(), "dead", "unregistered")

    async def op(ctx) -> None:
        await ctx.step("", lambda: 1)

    async def main() -> None:
        jobs = manager(open_store)
        for bad in (0, -1, float("nan"), float("inf"), "5", True):
            with pytest.raises(ConfigurationError) as info:
                jobs.start("x", op, lease_seconds=bad)
            assert info.value.code == "LA-CONFIG" and info.value.hint
        for bad_name in ("", "  ", None, 3):
            with pytest.raises(ValidationError):
                jobs.start(bad_name, op)
        with pytest.raises(ValidationError):
            jobs.start("x", op, metadata=["not", "a", "dict"])
        with pytest.raises(ConfigurationError):
            jobs.register("x", "not callable")
        with pytest.raises(JobError) as info:
            jobs.start("nothing-registered")
        assert info.value.code == "LA-JOB-OPERATION"
        await jobs.refresh()
        for call in (
            lambda: jobs.get("nope"),
            lambda: jobs.cancellation_token("nope"),
        ):
            with pytest.raises(JobError) as info:
                call()
            assert info.value.code == "LA-JOB-NOT-FOUND"
        for coro in (jobs.wait("nope"), jobs.cancel("nope"), jobs.resume("nope")):
            with pytest.raises(JobError) as info:
                await coro
            assert info.value.code == "LA-JOB-NOT-FOUND"
        # takeover of a job whose operation is not registered here
        with pytest.raises(JobError) as info:
            await jobs.resume("dead")
        assert info.value.code == "LA-JOB-OPERATION"
        assert info.value.details["name"] == "unregistered"
        # a bad step name fails the job with a typed error
        failed = await jobs.wait(jobs.start("bad-step", op).job_id, timeout=30)
        assert failed.status is JobStatus.failed and failed.error["code"] == "LA-VALIDATION"
        # resuming an ended job, waiting past a timeout
        with pytest.raises(JobError) as info:
            await jobs.resume(failed.job_id, op)
        assert info.value.code == "LA-JOB-STATE"
        gate = asyncio.Event()

        async def blocked(ctx) -> None:
            await gate.wait()

        slow = jobs.start("blocked", blocked)
        with pytest.raises(JobError) as info:
            await jobs.wait(slow.job_id, timeout=0.05)
        assert info.value.code == "LA-JOB-TIMEOUT"
        with pytest.raises(JobError) as info:
            await jobs.resume(slow.job_id, blocked)  # running here
        assert info.value.code == "LA-JOB-STATE"
        with pytest.raises(JobError) as info:
            await manager(open_store).resume(slow.job_id, blocked)  # its lease is live
        assert info.value.code == "LA-JOB-STATE" and info.value.details["holder"]
        with pytest.raises(ConfigurationError):
            await jobs.renew_lease(slow.job_id, 0)
        with pytest.raises(JobError) as info:
            await manager(open_store).emit_output(slow.job_id, "x")
        assert info.value.code in ("LA-JOB-STATE", "LA-JOB-NOT-FOUND")
        gate.set()
        await jobs.wait(slow.job_id, timeout=30)
        with pytest.raises(ConfigurationError):
            JobManager(open_store(), "s1", poll_interval=0)

    asyncio.run(main())
    # no running loop: start() refuses with a typed error
    with pytest.raises(ConfigurationError) as info:
        manager(open_store).start("x", op)
    assert "event loop" in info.value.message


def test_another_owners_session_is_refused(open_store) -> None:
    async def op(ctx) -> int:
        return 1

    async def main() -> None:
        alice = JobManager(open_store(), "owned", owner={"user_id": "alice"}, poll_interval=0.02)
        await alice.wait(alice.start("x", op).job_id, timeout=30)
        mallory = JobManager(open_store(), "owned", owner={"user_id": "mallory"})
        with pytest.raises(LightAgentError) as info:
            await mallory.refresh()
        assert info.value.code == "LA-SESSION-OWNER"
        # a start that cannot be recorded: wait() raises why (nothing ran)
        refused = mallory.start("x", op, job_id="j-mallory")
        with pytest.raises(LightAgentError) as info:
            await mallory.wait(refused.job_id, timeout=30)
        assert info.value.code == "LA-SESSION-OWNER"
        with pytest.raises(LightAgentError) as info:
            await mallory.recorded(refused.job_id)
        assert info.value.code == "LA-SESSION-OWNER"

    asyncio.run(main())


def test_the_heartbeat_renews_the_lease_so_no_one_takes_over_a_live_job(open_store) -> None:
    # A lease of 1.5 s renewed every 0.5 s: a renewal held up for a second on a loaded
    # machine still lands in time. The job ends only once it has outlived its first lease
    # and seen three renewals.
    release: list[asyncio.Event] = []

    async def slow(ctx) -> str:
        await asyncio.wait_for(release[0].wait(), 60)
        return "done"

    async def main() -> None:
        release.append(asyncio.Event())
        jobs = manager(open_store)
        rival = manager(open_store)
        rival.register("slow", slow)
        log = open_store()
        record = jobs.start("slow", slow, lease_seconds=1.5)
        await jobs.recorded(record.job_id)
        first_lease_over = time.time() + 1.5  # the first lease ends before this
        deadline = time.monotonic() + 60
        while True:
            await asyncio.sleep(0.1)
            assert await rival.take_over() == []  # renewed before it could expire
            assert await rival.mark_interrupted() == []
            renewed = [e for e in log.events("s1") if e.type == "job.lease_renewed"]
            if len(renewed) >= 3 and time.time() > first_lease_over:
                break
            assert time.monotonic() < deadline, "the lease was not renewed"
        release[0].set()
        done = await rival.wait(record.job_id, timeout=30)
        assert done.status is JobStatus.success and done.attempts == 1

    asyncio.run(main())
    renewals = [e for e in open_store().events("s1") if e.type == "job.lease_renewed"]
    assert len(renewals) >= 3
    assert all(e.data["lease_epoch"] == 1 for e in renewals)
    assert all(
        b.data["lease_expires_at"] > a.data["lease_expires_at"]
        for a, b in itertools.pairwise(renewals)
    )


def test_workers_racing_to_take_over_one_job_claim_it_once(open_store) -> None:
    forge_dead_holder(open_store(), "raced", "ship")
    runs: list[str] = []

    async def ship(ctx) -> str:
        runs.append(ctx.job_id)
        return "shipped"

    async def main() -> None:
        workers = [manager(open_store) for _ in range(6)]
        for worker in workers:
            worker.register("ship", ship)
        taken = await asyncio.gather(*(w.take_over() for w in workers))
        assert sum(len(t) for t in taken) == 1
        assert (await workers[0].wait("raced", timeout=30)).result == "shipped"

    asyncio.run(main())
    assert runs == ["raced"]
    kinds = types(open_store())
    assert kinds.count("job.resumed") == 1 and kinds.count("job.completed") == 1


class RecordingExecutor:
    """A job executor that runs everything here and records what the seam hands it."""

    kind = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.factory = None

    def bind(self, manager_factory) -> None:
        self.factory = manager_factory

    async def run_job(self, session_id, job_id, start, body):
        self.calls.append(("job", session_id, start["name"], start["arguments"]))
        return await body()

    async def run_job_step(self, job_id, name, body):
        self.calls.append(("step", name))
        return await body()

    async def run_job_end(self, job_id, body):
        end = await body()
        self.calls.append(("end", end["event"] if end else None))
        return end

    async def cancel_job(self, session_id, job_id) -> None:
        self.calls.append(("cancel", session_id))


def test_an_executor_gets_the_job_its_steps_and_its_end_and_owns_the_job(open_store) -> None:
    executor = RecordingExecutor()
    gate: list[asyncio.Event] = []

    async def ship(ctx) -> dict:
        charge = await ctx.step("charge", lambda: "ch-1")
        if ctx.arguments.get("hold"):
            await gate[0].wait()
        return {"charge": charge, "again": await ctx.step("charge", lambda: "ch-2")}

    async def main() -> None:
        gate.append(asyncio.Event())
        with pytest.raises(ConfigurationError) as info:
            manager(open_store, executor=object())
        assert "run_job_step" in info.value.message and info.value.hint
        jobs = manager(open_store, executor=executor)
        assert executor.factory is not None and executor.factory("s1").executor is executor
        done = await jobs.wait(jobs.start("ship", ship, arguments={"n": 1}).job_id, timeout=30)
        assert done.result == {"charge": "ch-1", "again": "ch-1"} and done.executor == "recording"
        assert executor.calls == [
            ("job", "s1", "ship", {"n": 1}),
            ("step", "charge"),
            ("step", "charge"),
            ("end", "job.completed"),
        ]
        # an executor's job: no lease to expire, so nobody takes it over
        held = jobs.start("ship", ship, arguments={"hold": True})
        await jobs.recorded(held.job_id)
        for _ in range(6000):  # up to a minute
            await jobs.refresh()
            if jobs.get(held.job_id).steps:
                break
            await asyncio.sleep(0.01)
        plain = manager(open_store)
        plain.register("ship", ship)
        await plain.refresh()
        assert plain.get(held.job_id).lease_expires_at is None
        with pytest.raises(JobError) as info:
            await plain.resume(held.job_id)
        assert info.value.code == "LA-JOB-EXECUTOR" and info.value.hint
        assert info.value.details == {"job_id": held.job_id, "executor": "recording"}
        assert await plain.take_over() == [] and await plain.mark_interrupted() == []
        # without the executor, cancel asks (the job's holder reads the request) ...
        asked = await plain.cancel(held.job_id, "asked")
        assert asked.status is JobStatus.running and asked.cancel_requested == "asked"
        # ... with it, the end is recorded at once and the executor told to stop the job
        ended = await manager(open_store, executor=executor).cancel(held.job_id, "stop")
        assert ended.status is JobStatus.cancelled and ended.error["code"] == "LA-CANCELLED"
        assert executor.calls[-1] == ("cancel", "s1")
        gate[0].set()
        for _ in range(6000):  # up to a minute
            if held.job_id not in jobs._local:
                break
            await asyncio.sleep(0.01)
        # the holder's own end is refused: the job was cancelled first
        assert executor.calls[-1] == ("end", None)

    asyncio.run(main())
    kinds = types(open_store())
    assert kinds.count("job.cancelled") == 1 and kinds.count("job.cancel_requested") == 1
    assert kinds.count("job.completed") == 1


class DyingExecutor(RecordingExecutor):
    """Keeps each job's start, as a durable executor does, then dies before running it."""

    kind = "recording"

    def __init__(self) -> None:
        super().__init__()
        self.kept: dict[str, dict] = {}

    async def run_job(self, session_id, job_id, start, body):
        self.kept[job_id] = start
        raise RuntimeError("the process died before the job ran")


def test_an_executor_job_whose_start_was_never_recorded_starts_on_its_recovery(
    open_store,
) -> None:
    """With an executor the start is recorded inside the executor's job: a crash before
    that leaves no half-started job in the log, and the executor's recovery starts it from
    the start it kept, at attempt 1, exactly once."""
    dying, runs = DyingExecutor(), []

    async def ship(ctx) -> dict:
        runs.append(ctx.attempt)
        return {"charge": await ctx.step("charge", lambda: "ch-1"), "order": ctx.arguments}

    async def main() -> None:
        first = manager(open_store, executor=dying)
        started = first.start("ship", ship, arguments={"order": 7}, idempotency_key="o-7")
        with pytest.raises(RuntimeError, match="died"):
            await first.wait(started.job_id, timeout=30)
        await first.refresh()
        assert first.list() == []  # nothing recorded: the executor never ran the job
        start = dying.kept[started.job_id]
        assert start["name"] == "ship" and start["arguments"] == {"order": 7}

        # the executor's recovery, in a manager of another worker
        recovering = RecordingExecutor()
        later = manager(open_store, executor=recovering, worker_id="w2")
        later.register("ship", ship)
        end = await later.execute_job(started.job_id, start=start)
        assert end == {
            "event": "job.completed",
            "result": {"charge": "ch-1", "order": {"order": 7}},
        }
        done = await later.wait(started.job_id, timeout=30)
        assert done.attempts == 1 and done.idempotency_key == "o-7" and done.executor == "recording"
        # a recovery that runs again finds the job ended: nothing runs twice
        assert await later.execute_job(started.job_id, start=start) is None

    asyncio.run(main())
    assert runs == [1]
    assert types(open_store()) == [
        "session.started",
        "job.created",
        "job.started",
        "job.step",
        "job.completed",
        "inbox.enqueued",
    ]


def test_closing_a_manager_before_its_executor_recorded_a_start_interrupts_nothing(
    open_store,
) -> None:
    """aclose() while the executor holds a job whose start is not in the log yet: nothing
    to mark interrupted (the executor recovers the job), and no error."""

    class Holding(RecordingExecutor):
        def __init__(self) -> None:
            super().__init__()
            self.entered = asyncio.Event()

        async def run_job(self, session_id, job_id, start, body):
            self.entered.set()
            await asyncio.Event().wait()  # until the manager closes

    async def main() -> None:
        executor = Holding()
        jobs = manager(open_store, executor=executor)
        jobs.start("ship", lambda ctx: "never")
        await executor.entered.wait()
        await jobs.aclose()
        await jobs.refresh()
        assert jobs.list() == []

    asyncio.run(main())
    assert [t for t in types(open_store()) if t.startswith("job.")] == []
