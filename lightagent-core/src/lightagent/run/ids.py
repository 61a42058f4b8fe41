"""Identifiers of runs, traces and tool calls."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from lightagent.models.arguments import load_arguments

__all__ = ["idempotency_key", "new_id"]


def new_id(prefix: str) -> str:
    """A random id like ``run_3f9c…`` (96 bits)."""
    return f"{prefix}_{os.urandom(12).hex()}"


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
    canonical = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    digest = hashlib.sha256()
    for part in (run_id, str(index), name, canonical):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x1f")
    return digest.hexdigest()
