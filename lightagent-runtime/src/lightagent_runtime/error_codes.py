"""The codes of the long-task runtime (registered through the ``lightagent.error_codes``
entry point; each is in ``docs/errors.md``)."""

from __future__ import annotations

from lightagent.error_codes import Row

__all__ = ["CODES"]

# fmt: off
CODES: tuple[Row, ...] = (
    ("LA-CONTEXT-OVERFLOW", "model", "The provider refused the request as longer than its context window, again after compacting it once.", "Shorten the conversation or the tool results, or set context_budget=ContextBudget(max_tokens=...) below the model's window."),
)
# fmt: on
