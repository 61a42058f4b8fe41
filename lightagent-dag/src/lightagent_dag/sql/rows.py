"""Conversions between database rows and LightDAG records."""

from __future__ import annotations

import json
import uuid
from typing import Any

from lightagent_dag.records import ArtifactManifest, DAGEvent, DAGRun, DAGTask
from lightagent_dag.specs import TaskSpec
from lightagent_dag.states import DAGRunStatus, DAGTaskStatus

__all__ = [
    "dumps",
    "loads",
    "new_attempt_id",
    "row_to_event",
    "row_to_manifest",
    "row_to_run",
    "row_to_task",
]


def dumps(value: Any) -> str:
    """Compact JSON for a text column."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def new_attempt_id() -> str:
    """A fresh attempt id."""
    return uuid.uuid4().hex


def loads(text: str | None) -> Any:
    """Parse a JSON text column (None stays None)."""
    return None if text is None else json.loads(text)


# Runs by their whole row: every claim reads its run, and the same row (same status,
# revision and update time) gives the same record, so its JSON columns are parsed once
# and callers may cache what they derive from it by identity. Bounded; cleared when full.
_RUNS: dict[tuple[Any, ...], DAGRun] = {}
_RUNS_MAX = 512


def row_to_run(row: Any) -> DAGRun:
    """A ``dag_runs`` row as a :class:`DAGRun` (an unchanged row gives the same object)."""
    m = row._mapping
    key = tuple(m.items())
    run = _RUNS.get(key)
    if run is None:
        if len(_RUNS) >= _RUNS_MAX:
            _RUNS.clear()
        run = _RUNS[key] = _build_run(m)
    return run


def _build_run(m: Any) -> DAGRun:
    return DAGRun(
        run_id=m["run_id"],
        status=DAGRunStatus(m["status"]),
        tenant_id=m["tenant_id"],
        project_id=m["project_id"],
        user_id=m["user_id"],
        root_task_ids=tuple(loads(m["root_task_ids"])),
        graph_revision=int(m["graph_revision"]),
        config=loads(m["config"]),
        context=loads(m["context"]),
        reason=m["reason"],
        created_at=float(m["created_at"]),
        updated_at=float(m["updated_at"]),
    )


def row_to_task(row: Any, depends_on: tuple[str, ...] = ()) -> DAGTask:
    """A ``dag_tasks`` row as a :class:`DAGTask`."""
    m = row._mapping
    return DAGTask(
        run_id=m["run_id"],
        spec=TaskSpec.from_stored(loads(m["spec"])),
        status=DAGTaskStatus(m["status"]),
        depth=int(m["depth"]),
        attempts=int(m["attempts"]),
        fence=int(m["fence"]),
        phase=m["phase"],
        decompositions=int(m["decompositions"]),
        lease_owner=m["lease_owner"],
        lease_expires_at=m["lease_expires_at"],
        available_at=m["available_at"],
        artifact_id=m["artifact_id"],
        last_error=loads(m["last_error"]),
        blocker=m["blocker"],
        depends_on=depends_on,
    )


def row_to_manifest(row: Any) -> ArtifactManifest:
    """A ``dag_artifacts`` row as an :class:`ArtifactManifest` (with its current state)."""
    m = row._mapping
    data = loads(m["manifest"])
    data["state"] = m["state"]
    return ArtifactManifest.from_dict(data)


def row_to_event(row: Any) -> DAGEvent:
    """A ``dag_events`` row as a :class:`DAGEvent`."""
    m = row._mapping
    return DAGEvent(
        event_id=int(m["event_id"]),
        run_id=m["run_id"],
        type=m["type"],
        data=loads(m["data"]),
        task_id=m["task_id"],
        created_at=float(m["created_at"]),
    )
