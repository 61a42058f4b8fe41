"""The store's transitions, one module per concern (see ``common``, ``attempts``, ``changes``)."""

from lightagent_dag.sql.attempts import (
    NoVerificationSlot,
    claim,
    fail_exhausted,
    publish,
    publish_inline,
    reject,
    renew,
    stage,
)
from lightagent_dag.sql.changes import (
    acquire_scheduler,
    decompose,
    resolve_blocker,
    set_run_status,
    supersede,
)
from lightagent_dag.sql.common import event, insert_tasks, lock_run, reconcile, refresh_run

__all__ = [
    "NoVerificationSlot",
    "acquire_scheduler",
    "claim",
    "decompose",
    "event",
    "fail_exhausted",
    "insert_tasks",
    "lock_run",
    "publish",
    "publish_inline",
    "reconcile",
    "refresh_run",
    "reject",
    "renew",
    "resolve_blocker",
    "set_run_status",
    "stage",
    "supersede",
]
