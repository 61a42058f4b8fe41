"""Redaction for log lines: a ``logging.Filter`` and a one-call installer.

Events and traces are redacted before they are stored or exported; log lines need the same
care, because HTTP clients log request bodies at DEBUG level (tool arguments, error text).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from lightagent.redaction import REDACTION_FAILED, redact_text
from lightagent.utf8 import clean_text

__all__ = ["RedactingFilter", "install_log_redaction"]


class RedactingFilter(logging.Filter):
    """Rewrites each record's message with credential-looking text replaced (and lone
    surrogates as U+FFFD, so a UTF-8 log file can take it); fails closed."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = redact_text(clean_text(record.getMessage()))
        except Exception:
            message = REDACTION_FAILED
        record.msg, record.args = message, None
        if record.exc_info and not record.exc_text:
            # The formatter would render the traceback after this filter ran, unredacted:
            # render it here (the formatter then uses this text as it is).
            try:
                record.exc_text = _TRACEBACKS.formatException(record.exc_info)
            except Exception:
                record.exc_text = REDACTION_FAILED
        for field in ("exc_text", "stack_info"):
            text = getattr(record, field, None)
            if text:
                try:
                    setattr(record, field, redact_text(clean_text(text)))
                except Exception:
                    setattr(record, field, REDACTION_FAILED)
        return True


_TRACEBACKS = logging.Formatter()


_FILTER = RedactingFilter()


def install_log_redaction(
    handlers: Iterable[logging.Handler] | None = None,
) -> list[logging.Handler]:
    """Add the redacting filter to ``handlers`` (default: every handler of the root logger).

    Handler filters see the records of every logger that reaches them, including the
    ``openai`` and ``httpx`` loggers. Idempotent; returns the handlers it now guards.
    """
    targets = list(logging.getLogger().handlers if handlers is None else handlers)
    for handler in targets:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(_FILTER)
    return targets
