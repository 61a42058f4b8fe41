"""The canonical digest of a value: what approvals, tokens and audit events bind to."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from lightagent.utf8 import utf8

__all__ = ["canonical_digest"]


def canonical_digest(value: Any) -> str:
    """SHA-256 hex of ``value`` as sorted, compact UTF-8 JSON (non-JSON values by ``str``)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(utf8(text)).hexdigest()
