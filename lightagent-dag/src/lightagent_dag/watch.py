"""``lightagent dag status RUN --watch``: follow a run until it ends, with a live progress line.

The line (``lightagent.ProgressLine``, drawn with ``rich`` when the ``progress`` extra
is installed) shows finished tasks over all tasks and the count per state; it is drawn
only on a terminal. Off a terminal the command waits quietly and prints the final
status, so scripts can ``lightagent dag status RUN --watch && next-step``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from lightagent.progress import ProgressLine

from lightagent_dag.errors import DAGError
from lightagent_dag.states import TERMINAL_RUN_STATES

__all__ = ["DONE_TASK_STATES", "add_watch_arguments", "watch_run"]

#: Task states counted as finished on the progress line.
DONE_TASK_STATES = frozenset({"verified", "failed", "cancelled", "superseded"})


def watch_run(
    store: Any,
    run_id: str,
    *,
    interval: float = 1.0,
    timeout: float | None = None,
    enabled: bool | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Poll ``store`` until run ``run_id`` reaches a terminal state; returns the final run record.

    A ``blocked`` or ``paused`` run also ends the watch (it waits for a person). After
    ``timeout`` seconds with the run still going: ``LA-DAG-STATE``.
    """
    if interval <= 0:
        raise DAGError("LA-CONFIG", f"--interval must be > 0 seconds, got {interval}")
    deadline = None if timeout is None else time.monotonic() + timeout
    with ProgressLine(f"dag {run_id}", enabled=enabled) as line:
        while True:
            run = store.require_run(run_id)
            tasks = store.list_tasks(run_id)
            counts: dict[str, int] = {}
            for task in tasks:
                counts[task.status.value] = counts.get(task.status.value, 0) + 1
            done = sum(n for state, n in counts.items() if state in DONE_TASK_STATES)
            states = " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
            line.update(completed=done, total=len(tasks), note=f"{run.status.value}  {states}")
            if run.status in TERMINAL_RUN_STATES or run.status.value in ("blocked", "paused"):
                return run
            if deadline is not None and time.monotonic() >= deadline:
                raise DAGError(
                    "LA-DAG-STATE",
                    f"run {run_id!r} is still {run.status.value} after --timeout {timeout}s",
                    hint="Raise --timeout, or drop it to watch until the run ends.",
                    details={"run_id": run_id, "status": run.status.value},
                )
            sleep(interval)


def add_watch_arguments(parser: argparse.ArgumentParser) -> None:
    """``--watch``, ``--interval`` and ``--timeout`` of ``lightagent dag status``."""
    parser.add_argument(
        "--watch",
        action="store_true",
        help="follow the run until it ends, with a live progress line on a terminal",
    )
    parser.add_argument(
        "--interval", type=float, default=1.0, help="with --watch: seconds between polls"
    )
    parser.add_argument(
        "--timeout", type=float, default=None, help="with --watch: give up after this many seconds"
    )
