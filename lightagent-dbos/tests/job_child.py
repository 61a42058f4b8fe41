"""A process that runs or recovers a background job on DBOSJobExecutor, for the crash test.

``python job_child.py CONFIG.json``. ``mode``: ``run`` starts job ``ship`` (key
``order-1``) and waits for it; ``recover`` launches DBOS (which recovers the unfinished
job's workflow) and waits for the job's end in the session log. Either prints the job as
JSON. Each ledger step appends a line to ``dir/<step>.log``; with ``block`` the job, once
its ``charge`` step is recorded, tells the test through the FIFO ``dir/fifo`` and waits to
be killed; with ``kill_before_start`` the process kills itself (SIGKILL) as it is about
to record the job's start, after DBOS has the workflow (``recover`` is then given the
job's ``job_id``). With ``agent`` (a DBOSAgent's name) the job is instead an agent run of
``Note hello`` on the loopback model at ``base_url``, its tool appending to
``dir/notes.log`` (with ``durable`` false, of the plain agent: no DBOSAgent wraps it).
Nothing here sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

CFG: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text()) if __name__ == "__main__" else {}


def _log(step: str) -> str:
    with open(Path(CFG["dir"]) / f"{step}.log", "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
        f.flush()
        os.fsync(f.fileno())
    return f"{step} by {os.getpid()}"


def _signal_and_wait() -> None:
    with open(Path(CFG["dir"]) / "fifo", "w", encoding="utf-8") as fifo:
        fifo.write("charged\n")
    threading.Event().wait()


async def ship(ctx: Any) -> dict[str, Any]:
    charge = await ctx.step("charge", _log, "charge")
    await ctx.emit_output("charged")  # a recovery emits it again: written once
    if CFG.get("block"):  # the first process: between two steps, until the test kills it
        await asyncio.to_thread(_signal_and_wait)
    label = await ctx.step("label", _log, "label")
    return {"charge": charge, "label": label, "attempt": ctx.attempt}


def _store() -> Any:
    from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore

    url = CFG["url"]
    if url.startswith("sqlite"):
        return SqliteSessionStore(Path(CFG["dir"]) / "sessions.sqlite3")
    return SqlSessionStore(url.replace("postgresql://", "postgresql+psycopg://", 1))


def write_note(text: str) -> str:
    """Append ``text`` to the notes (not idempotent: each call adds a line)."""
    with open(Path(CFG["dir"]) / "notes.log", "a", encoding="utf-8") as f:
        f.write(text + "\n")
        f.flush()
        os.fsync(f.fileno())
    return f"noted: {text}"


def _agent_jobs(executor: Any) -> Any:
    """The session's manager of an agent a DBOSAgent wraps (its job runs are children)."""
    from lightagent import LightAgent
    from lightagent_dbos import DBOSAgent

    agent = LightAgent(
        name="worker",
        model="gpt-4.1",
        api_key="test",
        base_url=CFG["base_url"],
        tools=[write_note],
        session_store=_store(),
    )
    if CFG.get("durable", True):
        DBOSAgent(agent, name=CFG["agent"])
    CFG["started"] = lambda: agent.start_job("Note hello", session_id="crash", idempotency_key="n")
    return agent.job_manager("crash", executor=executor, poll_interval=0.05)


def _kill_before_start() -> None:
    """SIGKILL this process inside the log write that would record a job's start."""
    import signal

    from lightagent_runtime.jobs.log import JobLog

    write = JobLog.write

    def dying(self: Any, job_id: str, build: Any) -> Any:
        def checked(record: Any) -> Any:
            events = build(record)
            if any(e.type == "job.created" for e in events):
                os.kill(os.getpid(), signal.SIGKILL)
            return events

        return write(self, job_id, checked)

    JobLog.write = dying  # type: ignore[method-assign]


def main() -> None:
    from dbos import DBOS
    from lightagent_dbos import DBOSJobExecutor
    from lightagent_runtime.jobs import JobManager

    executor = DBOSJobExecutor(name=CFG["name"])
    if CFG.get("agent"):
        jobs = _agent_jobs(executor)
    else:
        jobs = JobManager(_store(), "crash", executor=executor, poll_interval=0.05)
        jobs.register("ship", ship)
    DBOS(
        config={
            "name": "lightjob-dbos-child",
            "system_database_url": CFG["url"],
            "application_version": "lightjob-dbos-test",
        }
    )
    DBOS.launch()  # recover: DBOS starts the dead process's job again, in the background

    async def run() -> dict[str, Any]:
        if CFG["mode"] == "run" and CFG.get("agent"):
            job_id = CFG["started"]().job_id
        elif CFG["mode"] == "run":
            if CFG.get("kill_before_start"):
                _kill_before_start()
            job_id = jobs.start("ship", idempotency_key="order-1").job_id
            # start() returns before the job's task runs: the id is out before the kill
            (Path(CFG["dir"]) / "job_id").write_text(job_id)
        elif CFG.get("job_id"):  # its start was never recorded: DBOS's recovery records it
            job_id = CFG["job_id"]
            workflow = await DBOS.retrieve_workflow_async(executor.workflow_id("crash", job_id))
            await workflow.get_result()
        else:
            job_id = (await jobs.refresh())[0].job_id
        done = await jobs.wait(job_id, timeout=120)
        # The log shows the end from inside the end step; DBOS records the step once it
        # returns, so wait for the workflow itself before listing its steps.
        workflow_id = executor.workflow_id("crash", job_id)
        await (await DBOS.retrieve_workflow_async(workflow_id)).get_result()
        steps = await DBOS.list_workflow_steps_async(workflow_id)
        return {
            "status": done.status.value,
            "result": done.result,
            "attempts": done.attempts,
            "output": done.output,
            "executor": done.executor,
            "steps": [s["function_name"] for s in steps],
        }

    print(json.dumps(asyncio.run(run())), flush=True)
    DBOS.destroy()


if __name__ == "__main__":
    main()
