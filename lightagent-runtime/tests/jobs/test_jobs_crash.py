"""The bar for jobs: SIGKILL the worker process mid-job, and a second process takes the job
over once its lease expires — without repeating a recorded step (a plain job's
``ctx.step``), or a tool call whose result is in the log (an agent run, resumed through
``lightagent.events.resume``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid

import pytest
from lightagent.events.sql_store import SqlSessionStore

JOB_WORKER = textwrap.dedent(
    r"""
    import asyncio, json, os, sys
    from lightagent.events.sql_store import SqlSessionStore
    from lightagent_runtime.jobs import JobManager

    url, prefix, ledger, mode = sys.argv[1:5]

    def record(line):
        with open(ledger, "a") as f:
            f.write(line + "\n")

    async def ship(ctx):
        charge = await ctx.step("charge", lambda: record("charge") or {"pid": os.getpid()})
        await ctx.emit_output("charged")
        if ctx.attempt == 1:
            print("charged", flush=True)
            await asyncio.sleep(3600)  # killed here
        label = await ctx.step("label", lambda: record("label") or "L-1")
        return {"charge": charge, "label": label, "attempt": ctx.attempt}

    async def main():
        store = SqlSessionStore(url, table_prefix=prefix)
        jobs = JobManager(store, "crash", lease_seconds=1, poll_interval=0.05)
        jobs.register("ship", ship)
        if mode == "start":
            record_ = jobs.start("ship", idempotency_key="order-1")
            await jobs.wait(record_.job_id)
            return
        while not (taken := await jobs.take_over()):
            await asyncio.sleep(0.1)  # the dead worker's lease has not expired yet
        done = await jobs.wait(taken[0].job_id, timeout=60)
        print(json.dumps({"result": done.result, "status": done.status.value,
                          "epoch": done.lease_epoch, "attempts": done.attempts,
                          "output": done.output}), flush=True)

    asyncio.run(main())
    """
)

AGENT_WORKER = textwrap.dedent(
    r"""
    import asyncio, sys, time
    from lightagent import CancellationToken, LightAgent
    from lightagent.events.sql_store import SqliteSessionStore

    db, ledger, base_url, mode, how = sys.argv[1:6]

    def charge(item: str) -> str:
        '''Charge for `item`: an outside side effect.'''
        with open(ledger, "a") as f:
            f.write(item + "\n")
        return f"charged {item}"

    def report(item: str) -> str:
        '''Report on `item` (read-only).'''
        if mode == "start":
            print("reporting", flush=True)
            time.sleep(3600)  # killed here
        return f"{item}: reported"

    agent = LightAgent(name="biller", model="gpt-4.1", api_key="k", base_url=base_url,
                       tools=[charge, report], session_store=SqliteSessionStore(db))

    async def main():
        if mode == "start" and how == "job":
            record = agent.start_job("charge and report", session_id="crash", lease_seconds=1)
            await agent.job_manager("crash").wait(record.job_id)
            return
        if mode == "start":  # a run its caller detached: it goes on as a job, then dies
            token = CancellationToken()
            asyncio.get_running_loop().call_soon(token.detach, "caller left")
            result = await agent.arun_detachable("charge and report", session_id="crash",
                                                 cancellation_token=token, lease_seconds=1,
                                                 result_format="object")
            assert result.error["details"]["mode"] == "detach"
            await agent.job_manager("crash").wait(result.error["details"]["job_id"])
            return
        # approve: the report call was requested but has no result; it is read-only, so
        # running it again is safe (the charge has its result recorded: it never reruns)
        jobs = agent.job_manager("crash", approve=True, poll_interval=0.05)
        while not (taken := await jobs.take_over()):
            await asyncio.sleep(0.1)
        done = await jobs.wait(taken[0].job_id, timeout=60)
        print("answer", done.status.value, done.result["content"], flush=True)

    asyncio.run(main())
    """
)


def spawn(script, *args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(script), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ,
    )


def kill_at(proc: subprocess.Popen, marker: str) -> None:
    """SIGKILL ``proc`` as soon as it prints ``marker`` (a recorded step, a running tool)."""
    line = proc.stdout.readline()
    if line.strip() != marker:
        out, err = proc.communicate(timeout=60)
        raise AssertionError(f"worker failed before {marker!r}: {line}{out}{err}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def finish(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> tuple[str, str]:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.sqlite3'}", ""
    return request.getfixturevalue("postgres_url"), f"crash{uuid.uuid4().hex[:8]}_"


# Two interpreter starts and a lease of 1 s: about 1-3 s (not slow).
def test_a_killed_workers_job_is_taken_over_without_repeating_its_recorded_step(
    tmp_path, database
) -> None:
    url, prefix = database
    script, ledger = tmp_path / "worker.py", tmp_path / "ledger.txt"
    script.write_text(JOB_WORKER)
    first = spawn(script, url, prefix, ledger, "start")
    kill_at(first, "charged")
    assert ledger.read_text().split() == ["charge"]
    second = spawn(script, url, prefix, ledger, "takeover")
    summary = json.loads(finish(second))
    assert ledger.read_text().split() == ["charge", "label"]  # the charge was made once
    assert summary["status"] == "success" and summary["attempts"] == 2
    # the takeover emitted "charged" again at the same position: written once
    assert summary["epoch"] == 2 and summary["output"] == ["charged"]
    # the charge result is the first worker's, read from the log
    assert summary["result"]["charge"] == {"pid": first.pid}
    assert summary["result"]["label"] == "L-1" and summary["result"]["attempt"] == 2
    kinds = [e.type for e in SqlSessionStore(url, table_prefix=prefix).events("crash")]
    assert kinds.count("job.step") == 2 and kinds.count("job.resumed") == 1
    assert kinds.count("job.completed") == 1


# Two interpreter starts and a lease of 1 s: about 1-3 s (not slow).
@pytest.mark.parametrize("how", ["job", "detached"])
def test_a_killed_agent_run_job_resumes_in_another_process_without_rerunning_its_tool(
    loopback_server, tmp_path, how
) -> None:
    db, ledger, script = tmp_path / "s.sqlite3", tmp_path / "ledger.txt", tmp_path / "agent.py"
    script.write_text(AGENT_WORKER)
    loopback_server.reply(
        {"tool_calls": [{"name": "charge", "arguments": {"item": "book"}}]},
        {"tool_calls": [{"name": "report", "arguments": {"item": "book"}}]},
        "book charged and reported",
    )
    kill_at(spawn(script, db, ledger, loopback_server.base_url, "start", how), "reporting")
    out = finish(spawn(script, db, ledger, loopback_server.base_url, "takeover", how))
    assert out.split(None, 2) == ["answer", "success", "book charged and reported\n"]
    assert ledger.read_text().split() == ["book"]  # charged once, across both processes
    last = loopback_server.requests[-1]["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert results == ["charged book", "book: reported"]
    from lightagent.events.sql_store import SqliteSessionStore

    events = SqliteSessionStore(db).events("crash")
    finished = [e.data.get("name") for e in events if e.type == "tool.finished"]
    assert finished.count("charge") == 1
    assert [e.type for e in events].count("run.resumed") == 1
