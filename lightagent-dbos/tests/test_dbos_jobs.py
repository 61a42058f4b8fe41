"""DBOSJobExecutor: a background job is a DBOS workflow, each ledger step a DBOS step and
its end recorded from a step; DBOS, not a lease, owns the job (no takeover), cancel also
cancels the workflow, and a DBOSAgent's job run is a child workflow. The crash tests kill
a worker between two ledger steps and let a second process recover the job."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS
from lightagent import LightAgent
from lightagent.errors import ConfigurationError
from lightagent.events.model import SessionEvent
from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore
from lightagent_dbos import DBOSAgent, DBOSJobExecutor

from .conftest import unique_name

jobs_mod = pytest.importorskip("lightagent_runtime.jobs")
JobError, JobManager, JobStatus = jobs_mod.JobError, jobs_mod.JobManager, jobs_mod.JobStatus


@pytest.fixture(scope="module")
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One DBOS for the module's in-process tests (a launch and a destroy cost ~1.5 s)."""
    path = tmp_path_factory.mktemp("dbos") / "dbos.sqlite"
    DBOS(config={"name": "lightjob-dbos-test", "system_database_url": f"sqlite:///{path}"})
    DBOS.launch()
    try:
        yield
    finally:
        DBOS.destroy()


def _child_store(system_db: str, tmp_path: Path) -> Any:
    """The session store job_child.py writes to."""
    if system_db.startswith("sqlite"):
        return SqliteSessionStore(tmp_path / "sessions.sqlite3")
    return SqlSessionStore(system_db.replace("postgresql://", "postgresql+psycopg://", 1))


def _types(store: Any, session_id: str = "s1") -> list[str]:
    return [e.type for e in store.events(session_id)]


def test_a_job_is_a_workflow_and_its_ledger_steps_are_dbos_steps(launched, tmp_path) -> None:
    executor = DBOSJobExecutor(name=unique_name("jobs"))
    store = SqliteSessionStore(tmp_path / "s.sqlite3")
    ran: list[str] = []

    async def invoice(ctx) -> dict:
        charge = await ctx.step("charge", lambda: ran.append("charge") or "ch-1")
        await ctx.emit_output("charged")
        label = await ctx.step("label", lambda: ran.append("label") or "L-1")
        return {"charge": charge, "label": label, "attempt": ctx.attempt}

    async def main() -> Any:
        jobs = JobManager(store, "s1", executor=executor, poll_interval=0.02)
        first = jobs.start("invoice", invoice, idempotency_key="o-7", arguments={"order": "o-7"})
        done = await jobs.wait(first.job_id, timeout=30)
        # started again by its key: DBOS has the workflow; nothing runs twice
        again = JobManager(SqliteSessionStore(tmp_path / "s.sqlite3"), "s1", executor=executor)
        again.register("invoice", invoice)
        second = again.start("invoice", idempotency_key="o-7")
        assert (await again.wait(second.job_id, timeout=30)).result == done.result
        return done

    done = asyncio.run(main())
    assert done.status is JobStatus.success and done.executor == "dbos"
    assert done.result == {"charge": "ch-1", "label": "L-1", "attempt": 1}
    assert ran == ["charge", "label"] and done.output == ["charged"]
    wid = executor.workflow_id("s1", done.job_id)
    assert wid == f"lightjob.{executor.name}:s1:{done.job_id}"
    steps = [s["function_name"] for s in DBOS.list_workflow_steps(wid)]
    assert steps == ["lightjob.step.charge", "lightjob.step.label", "lightjob.end"]
    status = DBOS.get_workflow_status(wid)
    assert (
        status is not None and status.status == "SUCCESS" and status.name == executor.workflow_name
    )
    assert DBOS.retrieve_workflow(wid).get_result()["event"] == "job.completed"
    events = store.events("s1")
    started = next(e.data for e in events if e.type == "job.started")
    assert started["executor"] == "dbos" and started["lease_expires_at"] is None
    assert [e.data["step"] for e in events if e.type == "job.step"] == ["charge", "label"]
    assert _types(store).count("job.created") == 1 and _types(store).count("job.completed") == 1


def test_dbos_owns_the_job_so_takeover_is_refused_and_cancel_stops_the_workflow(
    launched, tmp_path
) -> None:
    executor = DBOSJobExecutor(name=unique_name("jobs"))
    db = tmp_path / "s.sqlite3"
    after: list[str] = []

    async def patient(ctx) -> str:
        await ctx.step("first", lambda: "one")
        assert await asyncio.to_thread(ctx.cancellation_token.wait, 30)
        await ctx.step("after", lambda: after.append("ran") or "two")  # refused by DBOS
        return "never"

    async def main() -> Any:
        jobs = JobManager(SqliteSessionStore(db), "s1", executor=executor, poll_interval=0.02)
        record = jobs.start("patient", patient)
        for _ in range(6000):  # its first step recorded (up to a minute): DBOS runs it
            if any(r.steps for r in await jobs.refresh()):
                break
            await asyncio.sleep(0.01)
        plain = JobManager(SqliteSessionStore(db), "s1", poll_interval=0.02)
        plain.register("patient", patient)
        other = JobManager(SqliteSessionStore(db), "s1", executor=executor, poll_interval=0.02)
        for worker in (plain, other):
            with pytest.raises(JobError) as info:
                await worker.resume(record.job_id)
            assert info.value.code == "LA-JOB-EXECUTOR" and info.value.hint
            assert info.value.details == {"job_id": record.job_id, "executor": "dbos"}
        assert await plain.take_over() == [] and await plain.mark_interrupted() == []
        # from another manager: recorded at once, and the workflow is cancelled
        running_here = jobs._local[record.job_id]
        cancelled = await other.cancel(record.job_id, "not needed")
        assert cancelled.status is JobStatus.cancelled
        assert cancelled.error["code"] == "LA-CANCELLED"
        assert cancelled.error["message"].endswith("not needed")
        wid = executor.workflow_id("s1", record.job_id)
        assert (await DBOS.get_workflow_status_async(wid)).status == "CANCELLED"
        # the job's manager reads the cancel, the operation's next step is refused by
        # DBOS, and the manager stops waiting for the workflow
        await asyncio.wait_for(running_here.done.wait(), 60)
        assert running_here.error is None and record.job_id not in jobs._local
        assert (await jobs.wait(record.job_id, timeout=5)).status is JobStatus.cancelled
        return record

    asyncio.run(main())
    kinds = _types(SqliteSessionStore(db))
    assert kinds.count("job.cancelled") == 1 and kinds.count("job.cancel_requested") == 1
    assert after == [] and "job.completed" not in kinds


def test_a_closing_manager_leaves_a_dbos_job_to_dbos(launched, tmp_path) -> None:
    executor = DBOSJobExecutor(name=unique_name("jobs"))
    db = tmp_path / "s.sqlite3"

    async def main() -> Any:
        gate = asyncio.Event()

        async def long(ctx) -> str:
            await ctx.step("first", lambda: "one")
            await gate.wait()
            return "done"

        jobs = JobManager(SqliteSessionStore(db), "s1", executor=executor, poll_interval=0.02)
        record = jobs.start("long", long)
        await jobs.recorded(record.job_id)
        await jobs.aclose()  # not interrupted: DBOS owns the job, and its workflow goes on
        reader = JobManager(SqliteSessionStore(db), "s1", poll_interval=0.02)
        await reader.refresh()
        assert reader.get(record.job_id).status is JobStatus.running
        gate.set()
        return await reader.wait(record.job_id, timeout=30)

    done = asyncio.run(main())
    assert done.status is JobStatus.success and done.result == "done"
    assert "job.interrupted" not in _types(SqliteSessionStore(db))


def test_a_start_that_never_reached_dbos_runs_when_started_again(launched, tmp_path) -> None:
    executor = DBOSJobExecutor(name=unique_name("jobs"))
    store = SqliteSessionStore(tmp_path / "s.sqlite3")
    # a process recorded the job's start, then died before DBOS had its workflow
    store.append(
        "s1",
        [
            SessionEvent("job.created", data={"job_id": "j1", "name": "ship", "arguments": {}}),
            SessionEvent(
                "job.started",
                data={
                    "job_id": "j1",
                    "lease_owner": "dead",
                    "lease_epoch": 1,
                    "lease_expires_at": None,
                    "lease_seconds": 60,
                    "executor": "dbos",
                },
            ),
        ],
    )

    async def ship(ctx) -> int:
        return ctx.attempt

    async def main() -> Any:
        jobs = JobManager(store, "s1", executor=executor, poll_interval=0.02)
        await jobs.refresh()
        assert jobs.get("j1").executor == "dbos" and not jobs.get("j1").lease_expired()
        jobs.start("ship", ship, job_id="j1")
        return await jobs.wait("j1", timeout=30)

    done = asyncio.run(main())
    assert (done.status, done.result, done.attempts, done.lease_epoch) == (
        JobStatus.success,
        2,
        2,
        2,
    )


def test_an_agent_job_of_a_dbos_agent_runs_as_a_child_workflow(
    launched, loopback_server, tmp_path
) -> None:
    calls: list[str] = []

    def get_weather(city: str) -> str:
        """The weather in ``city``."""
        calls.append(city)
        return f"{city} is sunny."

    loopback_server.reply(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
        "Bergen is sunny.",
    )
    agent = LightAgent(
        name="forecaster",
        model="gpt-4.1",
        api_key="test",
        base_url=loopback_server.base_url,
        tools=[get_weather],
        session_store=SqliteSessionStore(tmp_path / "s.sqlite3"),
    )
    durable = DBOSAgent(agent, name=unique_name())
    executor = DBOSJobExecutor(name=unique_name("jobs"))

    async def main() -> Any:
        jobs = agent.job_manager("s", executor=executor)
        record = agent.start_job("Weather in Bergen?", session_id="s")
        assert agent.job_manager("s") is jobs  # the session keeps its executor's manager
        return await jobs.wait(record.job_id, timeout=60)

    done = asyncio.run(main())
    assert done.status is JobStatus.success and done.result["content"] == "Bergen is sunny."
    assert calls == ["Bergen"]
    child = f"{durable.workflow_name}:s:{done.job_id}"
    assert DBOS.retrieve_workflow(child).get_result().content == "Bergen is sunny."
    steps = [s["function_name"] for s in DBOS.list_workflow_steps(child)]
    assert [s for s in steps if s.startswith(("lightagent.model", "lightagent.tool"))] == [
        "lightagent.model",
        "lightagent.tool.get_weather",
        "lightagent.model",
    ]
    parent = DBOS.list_workflow_steps(executor.workflow_id("s", done.job_id))
    names = [s["function_name"] for s in parent]
    assert names == [durable.workflow_name, "DBOS.getResult", "lightjob.end"]
    assert parent[0]["child_workflow_id"] == child
    # the run recorded its events in the session, beside the job's
    kinds = [e.type for e in agent.get_session("s")]
    assert "job.completed" in kinds and "tool.finished" in kinds, kinds


def test_a_job_started_from_a_dbos_agents_tool_is_a_workflow_of_its_own(
    launched, loopback_server, tmp_path
) -> None:
    holder: dict[str, Any] = {}

    async def digest(ctx) -> str:
        return await ctx.step("digest", lambda: f"digest of {ctx.arguments['topic']}")

    def start_digest(topic: str) -> str:
        """Start a background digest of ``topic``."""
        return holder["jobs"].start("digest", arguments={"topic": topic}).job_id

    loopback_server.reply(
        {"tool_calls": [{"name": "start_digest", "arguments": {"topic": "sales"}}]}, "started"
    )
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=[start_digest]
    )
    durable = DBOSAgent(agent, name=unique_name())
    executor = DBOSJobExecutor(name=unique_name("jobs"))

    async def main() -> Any:
        jobs = holder["jobs"] = JobManager(
            SqliteSessionStore(tmp_path / "s.sqlite3"), "s", executor=executor, poll_interval=0.02
        )
        jobs.register("digest", digest)
        # the tool runs inside a step of the agent's workflow, in a worker thread
        run = await durable.arun("digest sales", workflow_id="outer-1", result_format="object")
        job_id = next(m["content"] for m in run.messages if m["role"] == "tool")
        return await jobs.wait(job_id, timeout=60)

    done = asyncio.run(main())
    assert done.status is JobStatus.success and done.result == "digest of sales"
    job = DBOS.get_workflow_status(executor.workflow_id("s", done.job_id))
    assert job is not None and job.status == "SUCCESS"
    assert job.parent_workflow_id is None  # not a child of the run: it outlives it


def test_executor_names_and_types_are_checked(tmp_path) -> None:
    name = unique_name("jobs")
    DBOSJobExecutor(name=name)
    with pytest.raises(ConfigurationError):
        DBOSJobExecutor(name=name)
    with pytest.raises(ConfigurationError):
        DBOSJobExecutor(name="")
    with pytest.raises(ConfigurationError) as info:
        JobManager(SqliteSessionStore(tmp_path / "s.sqlite3"), "s1", executor=object())
    assert info.value.code == "LA-CONFIG" and info.value.hint
    agent = LightAgent(model="gpt-4.1", api_key="k", base_url="http://127.0.0.1:9")
    DBOSAgent(agent, name=unique_name())
    DBOSAgent(agent, name=unique_name())
    with pytest.raises(ConfigurationError) as info:  # which one would run its jobs?
        DBOSJobExecutor(name=unique_name("jobs")).agent_runner(agent)
    assert "2 DBOSAgents wrap this agent" in info.value.message


# -- a worker killed in the middle of a job ------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def system_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_job_killed_before_its_start_is_recorded_is_started_by_dbos(
    system_db: str, tmp_path: Path
) -> None:
    """The start is recorded inside the job's workflow: a worker killed after DBOS has the
    workflow but before the session log has the job leaves no half-started job; the next
    launch records the start from the workflow's inputs and runs the job once."""
    from .children import last_json, spawn

    child = Path(__file__).with_name("job_child.py")
    cfg = {
        "dir": str(tmp_path),
        "url": system_db,
        "name": f"crashjob_{uuid.uuid4().hex[:8]}",
        "mode": "run",
        "kill_before_start": True,
    }
    first = spawn(cfg, child)
    assert first.wait() == -signal.SIGKILL
    job_id = (tmp_path / "job_id").read_text()
    # the dead worker recorded nothing of the job
    assert not [t for t in _types(_child_store(system_db, tmp_path), "crash") if "job" in t]

    result = last_json(
        spawn({**cfg, "mode": "recover", "kill_before_start": False, "job_id": job_id}, child)
    )
    charge = (tmp_path / "charge.log").read_text().splitlines()
    label = (tmp_path / "label.log").read_text().splitlines()
    assert len(charge) == 1 and len(label) == 1 and charge[0] == label[0] != str(first.pid)
    assert result == {
        "status": "success",
        "result": {
            "charge": f"charge by {charge[0]}",
            "label": f"label by {label[0]}",
            "attempt": 1,
        },
        "attempts": 1,
        "output": ["charged"],
        "executor": "dbos",
        "steps": ["lightjob.step.charge", "lightjob.step.label", "lightjob.end"],
    }


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_job_killed_between_ledger_steps_is_recovered_by_dbos(
    system_db: str, tmp_path: Path
) -> None:
    from .children import last_json, spawn

    child = Path(__file__).with_name("job_child.py")
    os.mkfifo(tmp_path / "fifo")
    cfg = {
        "dir": str(tmp_path),
        "url": system_db,
        "name": f"crashjob_{uuid.uuid4().hex[:8]}",
        "mode": "run",
        "block": True,
    }
    first = spawn(cfg, child)
    with open(tmp_path / "fifo", encoding="utf-8") as fifo:  # charge is recorded
        assert fifo.readline() == "charged\n"
    first.kill()
    first.wait()

    result = last_json(spawn({**cfg, "mode": "recover", "block": False}, child))
    charge = (tmp_path / "charge.log").read_text().splitlines()
    label = (tmp_path / "label.log").read_text().splitlines()
    assert len(charge) == 1 and len(label) == 1  # each side effect exactly once
    assert charge[0] == str(first.pid) != label[0]  # the charge was the dead worker's
    assert result == {
        "status": "success",
        "result": {
            "charge": f"charge by {first.pid}",
            "label": f"label by {label[0]}",
            "attempt": 2,
        },
        "attempts": 2,
        "output": ["charged"],
        "executor": "dbos",
        "steps": ["lightjob.step.charge", "lightjob.step.label", "lightjob.end"],
    }


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("durable", [True, False], ids=["dbos-agent", "plain-agent"])
def test_an_agent_job_killed_mid_run_is_recovered_without_repeating_its_tool(
    system_db: str, durable: bool, loopback_server, tmp_path: Path
) -> None:
    from .children import last_json, spawn

    arrived, release = threading.Event(), threading.Event()

    def held(body: Any) -> str:  # the request after the tool: the worker is killed meanwhile
        arrived.set()
        release.wait(120)
        return "never read"

    loopback_server.reply(
        {"tool_calls": [{"name": "write_note", "arguments": {"text": "hello"}}]},
        held,
        "All noted.",
    )
    child = Path(__file__).with_name("job_child.py")
    cfg = {
        "dir": str(tmp_path),
        "url": system_db,
        "base_url": loopback_server.base_url,
        "name": f"crashjob_{uuid.uuid4().hex[:8]}",
        "agent": f"crashagent_{uuid.uuid4().hex[:8]}",
        "durable": durable,
        "mode": "run",
    }
    first = spawn(cfg, child)
    assert arrived.wait(120), "the job's run never made its second model request"
    first.kill()
    first.wait()
    release.set()

    result = last_json(spawn({**cfg, "mode": "recover"}, child))
    assert (tmp_path / "notes.log").read_text().splitlines() == ["hello"]  # the tool ran once
    assert result["status"] == "success" and result["result"]["content"] == "All noted."
    assert result["executor"] == "dbos" and result["attempts"] == 2
    if durable:  # the job's workflow: the agent's run as a child workflow, then its end
        assert result["steps"] == [f"lightagent.{cfg['agent']}", "DBOS.getResult", "lightjob.end"]
    else:  # the run is inside the job's workflow; the recovery resumed it from the log
        assert result["steps"] == ["lightjob.end"]
    # the recovered run sent its next request with the checkpointed tool result
    assert loopback_server.requests[2]["messages"][-1]["content"] == "noted: hello"
