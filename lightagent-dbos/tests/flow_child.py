"""A process that runs or recovers a LightFlow on DBOSFlowExecutor, for the crash test.

``python flow_child.py CONFIG.json``. ``mode``: ``run`` runs the flow as run ``run_id``;
``recover`` launches DBOS (which recovers the unfinished execution) and waits for it.
Either prints the result as JSON. Each step agent appends a line to ``dir/<step>.log``;
with ``block`` the ``write`` step, after its line, tells the test through the FIFO
``dir/fifo`` and waits to be killed. Nothing here sleeps.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

CFG: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text()) if __name__ == "__main__" else {}


def _log(step: str) -> None:
    with open(Path(CFG["dir"]) / f"{step}.log", "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
        f.flush()
        os.fsync(f.fileno())


def research(query: str) -> str:
    _log("research")
    return "facts"


def write(query: str) -> str:
    _log("write")
    if CFG.get("block"):
        with open(Path(CFG["dir"]) / "fifo", "w", encoding="utf-8") as fifo:
            fifo.write("started\n")
        threading.Event().wait()  # until the test kills this process
    return "essay from " + query.rsplit(": ", 1)[-1]


def main() -> None:
    from dbos import DBOS
    from lightagent_dbos import DBOSFlowExecutor
    from lightagent_flow import LightFlow, SqlLightFlowStore

    executor = DBOSFlowExecutor(name=CFG["name"])
    store = SqlLightFlowStore(f"sqlite:///{Path(CFG['dir']) / 'flows.db'}")
    flow = (
        LightFlow(store=store, executor=executor)
        .step("research", agent=research)
        .step("write", agent=write, depends_on="research")
    )
    DBOS(
        config={
            "name": "lightflow-dbos-child",
            "system_database_url": CFG["url"],
            "application_version": "lightflow-dbos-test",
        }
    )
    DBOS.launch()
    if CFG["mode"] == "run":
        result = flow.run("Report", run_id=CFG["run_id"]).to_dict()
    else:
        result = DBOS.retrieve_workflow(f"{executor.workflow_name}:{CFG['run_id']}").get_result()
    record = flow.get_run(CFG["run_id"]) or {}
    print(
        json.dumps(
            {
                "status": result["status"],
                "content": result["content"],
                "stored": record.get("status"),
            }
        ),
        flush=True,
    )
    DBOS.destroy()


if __name__ == "__main__":
    main()
