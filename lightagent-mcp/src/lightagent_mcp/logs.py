"""Logging around MCP servers: their log notifications, and the SDK's own loggers kept short.

A server's ``notifications/message`` goes to the Python logger ``lightagent.mcp.<server>`` at
the matching level (``notice`` is INFO; ``alert`` and ``emergency`` are CRITICAL), its text
redacted. The SDK's loggers (``mcp.*``) log one line per event: a record's traceback is
folded into its message, unless the app asks for debug logs from them
(``logging.getLogger("mcp").setLevel(logging.DEBUG)``, or a DEBUG root logger).
"""

from __future__ import annotations

import json
import logging
from typing import Any

__all__ = ["LEVELS", "forward_server_log", "quiet_sdk_loggers", "wanted_level"]

#: MCP log levels (RFC 5424 names) to Python's.
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
_KEPT = 4000


def forward_server_log(server: str, params: Any, scrub: Any) -> None:
    """Log one ``notifications/message`` (its params) on ``lightagent.mcp.<server>``, redacted
    by ``scrub(text)``."""
    level = LEVELS.get(str(getattr(params, "level", "info")), logging.INFO)
    log = logging.getLogger(f"lightagent.mcp.{server}")
    if not log.isEnabledFor(level):
        return
    data = getattr(params, "data", None)
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    name = getattr(params, "logger", None)
    if name:
        text = f"{name}: {text}"
    text = scrub(text)
    if len(text) > _KEPT:
        text = f"{text[:_KEPT]}... [{len(text) - _KEPT:,} more characters not kept]"
    log.log(level, "%s", text)


def wanted_level(server: str) -> str:
    """The MCP level asked of a 2026 server: what ``lightagent.mcp.<server>`` logs now."""
    level = logging.getLogger(f"lightagent.mcp.{server}").getEffectiveLevel()
    for name in ("debug", "info", "warning", "error"):
        if level <= LEVELS[name]:
            return name
    return "critical"


class _OneLine(logging.Filter):
    """Folds a record's traceback into one line unless the ``mcp`` logger is at DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        if (
            info
            and info[1] is not None
            and not logging.getLogger("mcp").isEnabledFor(logging.DEBUG)
        ):
            exc = info[1]
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            record.msg = f"{record.getMessage()} ({detail.splitlines()[0] if detail else ''})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


_FILTER = _OneLine()


def quiet_sdk_loggers() -> None:
    """Give every ``mcp`` logger made so far the one-line filter (idempotent, cheap)."""
    manager = logging.Logger.manager
    for name in ["mcp", *list(manager.loggerDict)]:
        if name == "mcp" or name.startswith("mcp."):
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
