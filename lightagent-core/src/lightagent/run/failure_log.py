"""The one WARNING a failed run leaves: a run that fails returns its error as the answer (as
LightAgent 0.11 did), so the log is where it shows."""

from __future__ import annotations

import logging
from typing import Any

from lightagent.redaction import redact_text

__all__ = ["log_failure"]


def log_failure(logger: logging.Logger, result: Any) -> None:
    """One WARNING for a run that ended with an error: its id, code and redacted message."""
    error = getattr(result, "error", None)
    if not error:
        return
    message = redact_text(str(error.get("message") or ""))
    logger.warning("run %s failed: [%s] %s", result.run_id, error.get("code"), message)
