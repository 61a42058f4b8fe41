"""The codes of lightagent-skills (registered through the ``lightagent.error_codes`` entry
point; each is in ``docs/errors.md``)."""

from __future__ import annotations

from lightagent.error_codes import Row

__all__ = ["CODES"]

# fmt: off
CODES: tuple[Row, ...] = (
    ("LA-EXPRESSION", "validation", "The expression is not allowed by safe_expression.", "Use only numbers, strings, arithmetic, comparisons and literals."),
)
# fmt: on
