"""How a job's end is told: the inbox message of its completion, its error as recorded."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from lightagent.errors import LightAgentError
from lightagent.events.model import SessionEvent

from lightagent_runtime.jobs.records import JobRecord

__all__ = ["completion_message", "copy_record", "error_dict"]


def completion_message(record: JobRecord, kind: str, data: dict[str, Any]) -> SessionEvent:
    """The inbox ``context`` message that tells the session's next run how the job ended."""
    status = {"job.completed": "success", "job.failed": "failed", "job.cancelled": "cancelled"}[
        kind
    ]
    summary = {
        "job_id": record.job_id,
        "name": record.name,
        "status": status,
        "result": data.get("result"),
        "error": data.get("error"),
    }
    if status == "success":
        detail = f"result: {_short(data.get('result'))}"
    elif status == "failed":
        detail = f"error: {_short((data.get('error') or {}).get('message'))}"
    else:
        detail = f"reason: {_short(data.get('reason'))}"
    return SessionEvent(
        "inbox.enqueued",
        data={
            "message_id": f"job:{record.job_id}",
            "message_type": "context",
            "content": f"Background job {record.name!r} ({record.job_id}) {status}; {detail}",
            "metadata": {"kind": "job_completion", "job": summary},
        },
    )


def _short(value: Any, limit: int = 500) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_dict(exc: BaseException) -> dict[str, Any]:
    """The error a failed or cancelled job records (a run's own error dict is kept as is)."""
    carried = getattr(exc, "error", None)
    if isinstance(carried, dict) and "code" in carried:
        return dict(carried)  # a run's error, kept as the run reported it
    if isinstance(exc, LightAgentError):
        return exc.to_dict()
    if isinstance(exc, asyncio.CancelledError):
        return {"code": "LA-CANCELLED", "type": "CancelledError", "message": "cancelled"}
    return {
        "code": "LA-JOB",
        "type": type(exc).__name__,
        "message": f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
    }


def copy_record(record: JobRecord) -> JobRecord:
    """A copy of ``record`` the caller may change (the fold keeps its own)."""
    out = copy.copy(record)
    out.output, out.steps = list(record.output), dict(record.steps)
    out.metadata, out.arguments = dict(record.metadata), dict(record.arguments)
    return out
