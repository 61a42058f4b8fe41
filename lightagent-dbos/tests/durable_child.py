"""A process that runs, recovers or serves durable agent runs, for the crash tests.

``python durable_child.py CONFIG.json``; the config names the DBOS system database, the
loopback model server, the workflow and what to do (``mode``):

- ``run``: run ``query`` as workflow ``workflow_id`` and print its result as JSON;
- ``start``: start it in the background, then wait for its result and print it;
- ``recover``: launch DBOS (which recovers this executor's unfinished workflows) and
  print the result of ``workflow_id`` once it finishes;
- ``worker``: register the queue, print ``ready`` and serve runs until killed.

Tools record their side effects in files under ``dir``; with ``block_tool`` the tool,
after its side effect, tells the test through the FIFO ``dir/fifo`` and then waits to be
killed. No step here sleeps: every wait is on a pipe, an event or DBOS itself.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

CFG: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text()) if __name__ == "__main__" else {}


def _effect(name: str, line: str) -> None:
    with open(Path(CFG["dir"]) / name, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def _maybe_block() -> None:
    if CFG.get("block_tool"):
        with open(Path(CFG["dir"]) / "fifo", "w", encoding="utf-8") as fifo:
            fifo.write("started\n")
        threading.Event().wait()  # until the test kills this process


def write_note(text: str) -> str:
    """Append ``text`` to the notes (not idempotent: each call adds a line)."""
    _effect("notes.log", text)
    _maybe_block()
    return f"noted: {text}"


def set_flag(flag: str) -> str:
    """Set ``flag`` (idempotent: setting it twice changes nothing)."""
    _effect("flag_attempts.log", flag)
    (Path(CFG["dir"]) / f"flag-{flag}").write_text("on")
    _maybe_block()
    return f"flag {flag} is on"


def send_money(amount: int) -> str:
    """Send ``amount`` (needs a human's approval)."""
    _effect("payments.log", str(amount))
    return f"sent {amount}"


def mark(label: str) -> str:
    """Record which process served run ``label``."""
    _effect("runs.log", f"{label} {os.getpid()}")
    return f"marked {label}"


def main() -> None:
    from dbos import DBOS
    from lightagent import LightAgent
    from lightagent_dbos import DBOSAgent

    kwargs: dict[str, Any] = {}
    if CFG.get("session_db"):
        from lightagent.events.sql_store import SqliteSessionStore

        kwargs["session_store"] = SqliteSessionStore(CFG["session_db"])
    agent = LightAgent(
        model="gpt-4.1",
        api_key="test",
        base_url=CFG["base_url"],
        tools=[write_note, set_flag, send_money, mark],
        **kwargs,
    )
    durable = DBOSAgent(
        agent,
        name=CFG["name"],
        idempotent_tools=CFG.get("idempotent", ()),
        approval_tools=CFG.get("approval", ()),
    )
    DBOS(
        config={
            "name": "lightagent-dbos-child",
            "system_database_url": CFG["url"],
            "application_version": "lightagent-dbos-test",
            "executor_id": CFG.get("executor_id", "local"),
        }
    )
    DBOS.launch()
    mode = CFG["mode"]
    options = {"session_id": CFG["session_id"]} if CFG.get("session_id") else {}
    if mode == "worker":
        DBOS.register_queue(
            CFG["queue"],
            global_concurrency=CFG["concurrency"],
            worker_concurrency=CFG.get("worker_concurrency"),
            polling_interval_sec=0.05,
        )
        print("ready", flush=True)
        threading.Event().wait()
    if mode == "run":
        result = durable.run(
            CFG["query"], workflow_id=CFG["workflow_id"], result_format="object", **options
        )
    elif mode == "start":
        handle = durable.start(CFG["query"], workflow_id=CFG["workflow_id"], **options)
        result = handle.get_result()
    else:
        result = DBOS.retrieve_workflow(CFG["workflow_id"]).get_result()
    print(json.dumps({"content": result.content, "error": result.error}), flush=True)
    DBOS.destroy()


if __name__ == "__main__":
    main()
