"""The codes of the HTTP server (``lightagent serve``).

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
    ("LA-REQUEST-TOO-LARGE", "validation", "The request body is larger than the server accepts.", "Send a smaller body, or raise the server's limit (lightagent serve --max-body-bytes)."),
)
# fmt: on
