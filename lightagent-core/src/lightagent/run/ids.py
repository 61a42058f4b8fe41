"""Identifiers of runs, traces and tool calls."""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

from lightagent.models.arguments import load_arguments
from lightagent.utf8 import utf8

__all__ = ["idempotency_key", "new_id"]


#: The canonical JSON of arguments (made once: ``json.dumps`` builds an encoder per call).
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)

#: Random 96-bit hex ids, drawn from the OS 64 at a time: one system call per 64 ids
#: instead of one per id (two per run).
_IDS: list[str] = []
_BATCH = 64
_HEX24 = re.compile(".{24}")


def new_id(prefix: str) -> str:
    """A random id like ``run_3f9c…`` (96 bits from ``os.urandom``)."""
    try:
        return f"{prefix}_{_IDS.pop()}"
    except IndexError:
        _IDS.extend(_HEX24.findall(os.urandom(12 * _BATCH).hex()))
        return f"{prefix}_{_IDS.pop()}"


if hasattr(os, "register_at_fork"):
    # A forked child must not hand out the ids its parent still holds.
    os.register_at_fork(after_in_child=_IDS.clear)


def idempotency_key(run_id: str, index: int, name: str, arguments: Any) -> str:
    """The idempotency key of a tool call: sha256 of (run id, position in the run, name, canonical args).

    ``arguments`` may be the JSON text or the decoded value; JSON text is decoded first so
    that whitespace and key order do not change the key.
    """
    value = arguments
    if isinstance(arguments, str):
        try:
            value = load_arguments(arguments) if arguments.strip() else {}
        except ValueError:  # not JSON, or over the argument limits: key the text itself
            value = arguments
    canonical = _CANONICAL.encode(value)
    # Each part followed by a unit separator, hashed in one piece.
    text = f"{run_id}\x1f{index}\x1f{name}\x1f{canonical}\x1f"
    return hashlib.sha256(utf8(text)).hexdigest()
