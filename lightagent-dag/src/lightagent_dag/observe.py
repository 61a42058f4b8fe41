"""LightDAG events for process-wide instrumentation (``lightagent.add_global_observer``).

Nothing here is persisted: the store's ``dag_events`` stay the record. These events only
let an observer (the OpenTelemetry instrumentor, metrics) follow runs and attempts made
in this process, with the same ``on_event(source, event)`` call agent runs use.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from lightagent.interceptors import global_observers

__all__ = ["attempt_data", "notify"]

log = logging.getLogger("lightagent.dag")


def notify(source: Any, kind: str, data: dict[str, Any], *, run_id: str) -> None:
    """Hand one event to each global observer; a failing observer is logged, never raised."""
    observers = global_observers()
    if not observers:
        return
    event = {
        "type": kind,
        "data": data,
        "trace_id": None,
        "parent_trace_id": None,
        "run_group_id": None,
        "timestamp": time.time(),
        "run_id": run_id,
        "seq": 0,
    }
    for observer in observers:
        try:
            observer.on_event(source, event)
        except Exception as exc:
            log.warning("observer %s failed on %s: %s", type(observer).__name__, kind, exc)


def attempt_data(claim: Any, worker_id: str) -> dict[str, Any]:
    """What identifies one attempt in its start and end events."""
    spec = claim.task.spec
    return {
        "run_id": claim.run_id,
        "task_id": claim.task_id,
        "attempt_id": claim.attempt_id,
        "fence": claim.fence,
        "worker_key": spec.worker_key,
        "phase": claim.task.phase,
        "attempt": claim.task.attempts,
        "worker_id": worker_id,
    }
