"""The store's transitions, one module per concern (see ``common``, ``claims``, ``attempts``, ``changes``)."""

from lightagent_dag.sql.attempts import (
    NoVerificationSlot,
    publish,
    publish_inline,
    reject,
    stage,
)
from lightagent_dag.sql.changes import (
    acquire_scheduler,
    decompose,
    resolve_blocker,
    set_run_status,
    supersede,
)
from lightagent_dag.sql.claims import claim, fail_exhausted, renew
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
