"""LightDAG's codes: the seeds' ``LA-DAG-…`` codes plus our own.

Registered with lightagent through the ``lightagent.error_codes`` entry point (see
``pyproject.toml``), so ``LightAgentError``, ``ERROR_TAXONOMY`` and ``format_error_code``
know them. Codes are public and stable: add rows freely, never rename or reuse a code;
each is documented in ``docs/errors.md`` (a test fails when one is missing).
"""

from __future__ import annotations

from lightagent.error_codes import Row

__all__ = ["CODES"]

# fmt: off
CODES: tuple[Row, ...] = (
    ("LA-DAG", "dag", "A LightDAG operation failed.", "See the message and details; `lightagent dag status RUN_ID` shows the run."),
    ("LA-DAG-ARTIFACT-INTEGRITY", "dag", "A stored artifact does not match its hash or size.", "The blob was changed on disk; restore it or rerun the task."),
    ("LA-DAG-ARTIFACT-PATH", "dag", "An artifact path or scope is unsafe.", "Use plain tenant/project names; symlinks and '..' are refused."),
    ("LA-DAG-ARTIFACT-TOO-LARGE", "dag", "A candidate artifact is larger than max_artifact_bytes.", "Raise DAGConfig.max_artifact_bytes or make the worker's output smaller."),
    ("LA-DAG-BUDGET-EXHAUSTED", "dag", "A LightDAG limit was reached.", "Raise the DAGConfig limit named in details, or give the run less work."),
    ("LA-DAG-CONTEXT-OVERFLOW", "dag", "The task context is larger than its budget.", "Raise the context budget or pass fewer dependency artifacts."),
    ("LA-DAG-CYCLE", "dag", "The task graph has a dependency cycle.", "Remove the cycle named in details."),
    ("LA-DAG-FENCED", "dag", "This attempt was fenced out: its lease was taken over.", "Nothing was written; the task continues under the newer attempt."),
    ("LA-DAG-IDEMPOTENCY-CONFLICT", "dag", "The id is already used with different content.", "Use a new run_id, or resend exactly the same tasks."),
    ("LA-DAG-IDENTITY-REQUIRED", "dag", "A LightDAG run needs a tenant and a project.", "Pass context=SecurityContext(tenant_id=..., project_id=...)."),
    ("LA-DAG-INVALID", "dag", "A task spec or argument is invalid.", "Fix the field named in the message."),
    ("LA-DAG-LEASE-REJECTED", "dag", "Another scheduler holds this run's lease.", "Wait for it to finish or for its lease to expire."),
    ("LA-DAG-NOT-FOUND", "dag", "No such LightDAG run or task.", "Check the run_id and task_id; `lightagent dag status` lists tasks."),
    ("LA-DAG-RECOVERY-CONFIG-MISMATCH", "dag", "A worker key of the run is not registered here.", "Register every worker_key the run uses before running it."),
    ("LA-DAG-SCHEMA-MISMATCH", "dag", "The store's schema version is not supported.", "Upgrade lightagent-dag or use a store created by this version."),
    ("LA-DAG-STALE-ATTEMPT", "dag", "The attempt is no longer the task's active attempt.", "Nothing was written; the task continues under the newer attempt."),
    ("LA-DAG-STATE", "dag", "The run or task is not in a state that allows this.", "Check its status first; the message names the state found."),
    ("LA-DAG-UNKNOWN-DEPENDENCY", "dag", "A task depends on a task that does not exist.", "Add the task or remove the dependency named in details."),
    ("LA-DAG-VERIFICATION-FAILED", "dag", "The verifier rejected the candidate.", "See the verifier's diagnostics in the task's last_error."),
    ("LA-DAG-VERIFIER-UNAVAILABLE", "dag", "A verifier key of the run is not registered here.", "Register every verifier_key the run uses before running it."),
    ("LA-DAG-VERSION-CONFLICT", "dag", "The graph changed since the revision you read.", "Reload the run, check graph_revision, and retry."),
    ("LA-DAG-WORKER-PROTOCOL", "dag", "A worker returned something that is not a TaskOutcome.", "Return TaskOutcome.candidate/decompose/blocked, or its JSON form."),
)
# fmt: on
