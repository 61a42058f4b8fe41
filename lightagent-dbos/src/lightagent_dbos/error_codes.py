"""The codes of durable runs on DBOS (``LA-DBOS-…``).

The ``lightagent.error_codes`` entry point of lightagent-dbos points here; each code is
stable and in docs/errors.md.
"""

from __future__ import annotations

from lightagent.error_codes import Row

__all__ = ["CODES"]

# fmt: off
CODES: tuple[Row, ...] = (
    ("LA-DBOS-UNKNOWN-OUTCOME", "tool", "A tool call was interrupted by a crash and its outcome is unknown; it was not run again.", "Check the outside world by the call's idempotency_key, or declare the tool idempotent (DBOSAgent(idempotent_tools=...)) if a second run is harmless."),
    ("LA-DBOS-DENIED", "policy", "A tool call that needs approval was denied, or no decision came in time.", "Approve it with DBOSAgent.approve(workflow_id, call_id) (or DBOSClient.send) before approval_timeout."),
    ("LA-DBOS-OPTION", "validation", "A run option cannot be part of a durable run (it does not survive a restart).", "Pass only plain-data options (user_id, session_id, metadata, history, model_options ...); give tools to the agent itself."),
)
# fmt: on
