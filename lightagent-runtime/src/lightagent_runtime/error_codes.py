"""The codes of the long-task runtime (registered through the ``lightagent.error_codes``
entry point; each is in ``docs/errors.md``)."""

from __future__ import annotations

from lightagent.error_codes import Row

__all__ = ["CODES"]

# fmt: off
CODES: tuple[Row, ...] = (
    ("LA-JOB-EXECUTOR", "job", "The job is run by an executor (DBOS), which recovers it itself: it cannot be taken over or resumed.", "Let its executor recover it (DBOS: the next DBOS.launch() with the executor built); cancel it with jobs.cancel(job_id) if it must stop."),
    ("LA-CONTEXT-OVERFLOW", "model", "The provider refused the request as longer than its context window, again after compacting it once.", "Shorten the conversation or the tool results, or set context_budget=ContextBudget(max_tokens=...) below the model's window."),
)
# fmt: on
