"""Agent runs as background jobs (the model: the loopback server through the openai SDK): a
job's answer awaited by another manager, its completion seen by the session's next run
through the inbox, and the third cancellation mode — detach: the caller stops waiting, the
run carries on as a job whose result is awaited like any job's."""

from __future__ import annotations

import asyncio
import threading

import pytest
from lightagent import CancellationToken, ConfigurationError, LightAgent
from lightagent.events.sql_store import SqliteSessionStore
from lightagent_runtime.jobs import JobManager, JobStatus


def agent_for(server, db, **kw) -> LightAgent:
    return LightAgent(
        name="worker",
        model="gpt-4.1",
        api_key="k",
        base_url=server.base_url,
        session_store=SqliteSessionStore(db),
        **kw,
    )


def test_a_run_as_a_job_is_awaited_elsewhere_and_the_next_run_hears_of_it(
    loopback_server, tmp_path, job_executor
) -> None:
    db = tmp_path / "s.sqlite3"
    agent = agent_for(loopback_server, db)
    loopback_server.reply("the report is ready", "noted")

    async def main() -> None:
        record = agent.start_job(
            "write the report", session_id="s", metadata={"who": "cron"}, executor=job_executor
        )
        assert record.name == "agent:worker" and record.owner_agent_id == "worker"
        # start() returns at once; recorded() once the job is in the log for others to see
        assert (await agent.job_manager("s").recorded(record.job_id)).job_id == record.job_id
        other = JobManager(SqliteSessionStore(db), "s", owner={"user_id": "default_user"})
        done = await other.wait(record.job_id, timeout=30)
        assert done.status is JobStatus.success
        assert done.executor == (None if job_executor is None else "dbos")
        assert done.result["content"] == "the report is ready"
        assert done.result["run_id"] == record.arguments["run_id"]
        # the session's next run is told, through the inbox, as a context message
        assert await agent.arun("anything new?", session_id="s") == "noted"

    asyncio.run(main())
    last = loopback_server.requests[1]["messages"]
    assert last[-1]["role"] == "user"
    assert "Background job 'agent:worker'" in last[-1]["content"]
    assert "success" in last[-1]["content"]
    events = agent.get_session("s")
    claimed = [e for e in events if e.type == "inbox.claimed"]
    assert [e.data["message_id"] for e in claimed] == [f"job:{record_id(events)}"]


def record_id(events) -> str:
    return next(e.data["job_id"] for e in events if e.type == "job.created")


def test_detach_returns_the_job_at_once_and_the_run_carries_on(loopback_server, tmp_path) -> None:
    db = tmp_path / "s.sqlite3"
    in_tool, release = threading.Event(), threading.Event()

    def lookup(city: str) -> str:
        """Look up `city`."""
        in_tool.set()
        assert release.wait(30)
        return f"{city}: sunny"

    agent = agent_for(loopback_server, db, tools=[lookup])
    loopback_server.reply(
        {"tool_calls": [{"name": "lookup", "arguments": {"city": "Paris"}}]}, "Paris is sunny"
    )
    token = CancellationToken()

    def detach_when_busy() -> None:
        assert in_tool.wait(30)
        token.detach("the user walked away")  # from another thread, while a tool runs

    async def main() -> None:
        threading.Thread(target=detach_when_busy).start()
        result = await agent.arun_detachable(
            "weather?", session_id="d", cancellation_token=token, result_format="object"
        )
        # the caller has its answer at once: the run was detached, not ended
        assert result.content is None and result.error["code"] == "LA-CANCELLED"
        details = result.error["details"]
        assert details["mode"] == "detach" and details["reason"] == "the user walked away"
        jobs = agent.job_manager("d")
        await jobs.refresh()
        assert jobs.get(details["job_id"]).status is JobStatus.running
        # after the detach, the caller's token no longer reaches the run
        token.cancel("too late")
        release.set()
        done = await jobs.wait(details["job_id"], timeout=30)
        assert done.status is JobStatus.success and done.result["content"] == "Paris is sunny"
        assert done.result["run_id"] == result.run_id

    asyncio.run(main())
    assert token.detach_requested == "the user walked away" and not token.detach("again")


def test_a_sync_run_detaches_and_carries_on_in_the_background(loopback_server, tmp_path):
    db = tmp_path / "s.sqlite3"
    in_tool, release = threading.Event(), threading.Event()

    def lookup(city: str) -> str:
        """Look up `city`."""
        in_tool.set()
        assert release.wait(30)
        return f"{city}: sunny"

    agent = agent_for(loopback_server, db, tools=[lookup])
    loopback_server.reply(
        {"tool_calls": [{"name": "lookup", "arguments": {"city": "Oslo"}}]}, "Oslo is sunny"
    )
    token = CancellationToken()
    threading.Thread(target=lambda: in_tool.wait(30) and token.detach("closing the tab")).start()
    result = agent.run_detachable(
        "weather?", session_id="sd", cancellation_token=token, result_format="object"
    )
    assert result.error["code"] == "LA-CANCELLED" and result.error["details"]["mode"] == "detach"
    job_id = result.error["details"]["job_id"]
    release.set()

    async def wait_elsewhere():  # another loop, another manager: the log is what they share
        other = JobManager(SqliteSessionStore(db), "sd", owner={"user_id": "default_user"})
        return await other.wait(job_id, timeout=30)

    done = asyncio.run(wait_elsewhere())
    assert done.status is JobStatus.success and done.result["content"] == "Oslo is sunny"
    # attached to the end, the sync form answers like run()
    loopback_server.reply("fine")
    assert (
        agent.run_detachable("and now?", session_id="sd", cancellation_token=CancellationToken())
        == "fine"
    )


def test_an_attached_detachable_run_answers_and_honours_cancel(loopback_server, tmp_path):
    db = tmp_path / "s.sqlite3"
    in_tool = threading.Event()
    stopper = CancellationToken()

    def lookup(city: str) -> str:
        """Look up `city`."""
        in_tool.set()
        assert stopper.wait(30)  # the run is cancelled while its tool runs
        return f"{city}: rain"

    agent = agent_for(loopback_server, db, tools=[lookup])
    loopback_server.reply(
        "plain answer",
        {"tool_calls": [{"name": "lookup", "arguments": {"city": "Oslo"}}]},
    )

    async def main() -> None:
        token = CancellationToken()
        answer = await agent.arun_detachable("hi", session_id="a", cancellation_token=token)
        assert answer == "plain answer"

        async def cancel_when_busy() -> None:
            assert await asyncio.to_thread(in_tool.wait, 30)
            stopper.cancel("stop now")

        canceller = asyncio.ensure_future(cancel_when_busy())
        stopped = await agent.arun_detachable(
            "weather?", session_id="a", cancellation_token=stopper, result_format="dict"
        )
        await canceller
        assert stopped["error"]["code"] == "LA-CANCELLED"
        jobs = agent.job_manager("a")
        statuses = [r.status for r in await jobs.refresh()]
        assert statuses == [JobStatus.success, JobStatus.cancelled]

    asyncio.run(main())


def test_a_run_starts_jobs_from_its_tools_async_and_sync(
    loopback_server, tmp_path, job_executor
) -> None:
    db = tmp_path / "s.sqlite3"
    holder: dict = {}

    async def digest(ctx) -> str:
        return f"digest of {ctx.arguments['topic']}"

    async def start_digest(topic: str) -> str:
        """Start a background digest of `topic` (an async tool: on the run's loop)."""
        return holder["jobs"].start("digest", arguments={"topic": topic}).job_id

    def start_sync_digest(topic: str) -> str:
        """Start a background digest of `topic` (a sync tool: in a worker thread)."""
        return holder["jobs"].start("digest", arguments={"topic": topic}).job_id

    agent = agent_for(loopback_server, db, tools=[start_digest, start_sync_digest])
    loopback_server.reply(
        {
            "tool_calls": [
                {"name": "start_digest", "arguments": {"topic": "sales"}},
                {"name": "start_sync_digest", "arguments": {"topic": "costs"}},
            ]
        },
        "two digests are on their way",
    )

    async def main() -> None:
        jobs = holder["jobs"] = agent.job_manager("r", executor=job_executor)
        jobs.register("digest", digest)
        result = await agent.arun("digests please", session_id="r", result_format="object")
        assert result.error is None, result.error
        ids = [m["content"] for m in result.messages if m["role"] == "tool"]
        done = [await jobs.wait(job_id, timeout=30) for job_id in ids]
        assert [d.result for d in done] == ["digest of sales", "digest of costs"]

    asyncio.run(main())


def test_bad_job_input_on_the_agent_is_typed(loopback_server, tmp_path) -> None:
    agent = agent_for(loopback_server, tmp_path / "s.sqlite3")
    bare = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url)

    async def main() -> None:
        with pytest.raises(ConfigurationError) as info:
            bare.start_job("q", session_id="s")
        assert "session store" in info.value.message
        with pytest.raises(ConfigurationError) as info:
            agent.start_job("q", session_id="s", tools=[len])
        assert info.value.details["refused"] == ["tools"]
        with pytest.raises(ConfigurationError):
            agent.start_job("", session_id="s")
        with pytest.raises(ConfigurationError):
            await agent.arun_detachable("q", session_id="s", cancellation_token=None)
        with pytest.raises(ConfigurationError):
            await agent.arun_detachable(
                "q", session_id="s", cancellation_token=CancellationToken(), result_format="x"
            )

    asyncio.run(main())
