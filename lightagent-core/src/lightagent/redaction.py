"""Credential redaction applied before anything is persisted or exported.

Two nets: keys whose *name* looks like a credential, whatever its case and separators
(``openai_api_key``, ``X-Api-Key``, ``accessToken``, ``CLIENT_SECRET``, ``id.token`` …),
and string *values* that look like keys or tokens wherever they appear (``sk-…``,
``Bearer …``, ``ghp_…``, ``AKIA…``, ``xox…``, JWTs, PEM blocks, ``password=…``,
passwords and key-like query parameters in URLs). Redaction fails closed: :func:`redact_or_marker` returns
:data:`REDACTION_FAILED` instead of the value when anything goes wrong.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import math
import re
from collections.abc import Mapping
from typing import Any

from lightagent.utf8 import clean_text

__all__ = [
    "REDACTED",
    "REDACTION_FAILED",
    "is_secret_key",
    "jsonable",
    "redact",
    "redact_or_marker",
    "redact_text",
]

REDACTED = "[redacted]"
REDACTION_FAILED = "[redaction-failed]"

# Key names are matched spelling-blind: ``accessToken``, ``access_token``, ``access-token``,
# ``ACCESS_TOKEN``, ``access.token`` and ``accesstoken`` are one name. A key is split into
# lower-case words (at separators and camelCase humps) and checked twice: as words joined
# by "_" (for short words that only count alone: ``auth``, ``pwd``, ``token``) and with
# every separator dropped (for credential words, wherever they sit). Plural usage counters
# (prompt_tokens, max_tokens) and idempotency_key are deliberately not credentials.
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")
_SECRET_WORDS = re.compile(r"(^|_)(auth|pwd)$|(^|_)token(_|$)")
_SECRET_COMPACT = re.compile(
    r"apikey|accesskey|privatekey|sessionkey|secret|password|passwd|passphrase|credential"
    r"|authorization|cookie|signature|token$"
)
_NOT_SECRET_KEY = re.compile(r"(^|_)(idempotency_key|tokens?_(count|usage)|max_tokens)$")

# Where a key may start: at a word boundary, or right after a %XX escape (URL-encoded
# text such as ``%22sk-…`` or ``key%3Dsk-…`` has no word boundary there).
_START = r"(?:\b|(?<=%[0-9A-Fa-f]{2}))"

_VALUE_PATTERNS: list[tuple[re.Pattern[str], Any]] = [
    # PEM blocks (private keys, certificates): the whole block.
    (
        re.compile(r"-----BEGIN [A-Z0-9 ]+-----.*?(-----END [A-Z0-9 ]+-----|\Z)", re.S),
        REDACTED,
    ),
    # Authorization schemes keep their scheme word.
    # (a credential has a digit somewhere: "Basic arithmetic" is prose, not a token)
    (
        re.compile(r"\b(Bearer|Basic|Token)\s+(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}", re.I),
        r"\1 " + REDACTED,
    ),
    # JWT: three base64url parts, the first one a JSON header.
    (re.compile(_START + r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}"), REDACTED),
    # Provider key formats.
    (re.compile(_START + r"sk-[A-Za-z0-9_-]{12,}"), REDACTED),
    (re.compile(_START + r"(sk|rk|pk)_(live|test)_[A-Za-z0-9]{12,}"), REDACTED),
    (re.compile(_START + r"gh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(_START + r"github_pat_[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(_START + r"(AKIA|ASIA)[0-9A-Z]{16}"), REDACTED),
    (re.compile(_START + r"xox[abposr]-[A-Za-z0-9-]{10,}"), REDACTED),
    (re.compile(_START + r"AIza[0-9A-Za-z_-]{30,}"), REDACTED),
    (re.compile(_START + r"hf_[A-Za-z0-9]{20,}"), REDACTED),
    # user:password@ in URLs.
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+@", re.I), r"\1" + REDACTED + "@"),
    # Key-like URL query parameters: ?key=, &api-key=, ?subscription-key=, ?sig=, ?auth=.
    (
        re.compile(
            r"([?&][\w.-]*?(?:key|sig|signature|auth)=)(?!\[redacted\])[^&#\s\"'<>]{4,}", re.I
        ),
        r"\1" + REDACTED,
    ),
    # key=value / key: value in free text for credential words.
    (
        re.compile(
            r"""(\b[\w-]*(?:api[_.-]?key|access[_.-]?key|private[_.-]?key|secret|password|passwd"""
            r"""|token|credentials?)(?:["']|%2[27])?\s*(?:[:=]|%3[Dd]|%3[Aa])\s*(?:["']|%2[27])?)"""
            r"""(?!\[redacted\])[^\s"',;&}]{4,}""",
            re.I,
        ),
        r"\1" + REDACTED,
    ),
]

# Cheap pre-check: a string with none of these (lowercased) cannot match any pattern.
_TRIGGERS = (
    "begin",
    "bearer",
    "basic",
    "token",
    "eyj",
    "sk-",
    "sk_",
    "rk_",
    "pk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "akia",
    "asia",
    "xox",
    "aiza",
    "hf_",
    "://",
    "key",
    "sig=",
    "auth=",
    "secret",
    "passw",
    "credential",
)


@functools.lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a credential, whatever its case and separators."""
    words = _SEPARATORS.sub("_", _HUMP.sub("_", key).lower()).strip("_")
    secret = _SECRET_WORDS.search(words) or _SECRET_COMPACT.search(words.replace("_", ""))
    return bool(secret) and not _NOT_SECRET_KEY.search(words)


def redact_text(text: str) -> str:
    """``text`` with every credential-looking substring replaced by ``[redacted]``."""
    if len(text) < 8:
        return text
    low = text.lower()
    if not any(word in low for word in _TRIGGERS):
        return text
    for pattern, replacement in _VALUE_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def jsonable(value: Any, _depth: int = 0) -> Any:
    """A JSON-safe copy of ``value`` (dataclasses, pydantic models, SDK objects, bytes …).

    Objects become their ``to_dict()``/``model_dump()``/dataclass fields, never a
    ``repr()`` that would hide structure (or a secret) in one opaque string.
    """
    if _depth > 64:
        return "[too-deep]"
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, _depth + 1) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, BaseException):
        to_dict = getattr(value, "to_dict", None)
        if callable(to_dict):
            return jsonable(to_dict(), _depth + 1)
        return {"type": type(value).__name__, "message": str(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value), _depth + 1)
    for method in ("to_dict", "model_dump"):
        fn = getattr(value, method, None)
        if callable(fn):
            return jsonable(fn(), _depth + 1)
    return str(value)


def redact(value: Any, *, replacement: str = REDACTED) -> Any:
    """A JSON-safe, redacted deep copy of ``value``; raises if ``value`` cannot be walked.

    Its strings are valid UTF-8: a lone surrogate becomes U+FFFD (:mod:`lightagent.utf8`).
    """
    return _walk(jsonable(value), replacement)


def _walk(value: Any, replacement: str) -> Any:
    if isinstance(value, str):
        out = redact_text(clean_text(value))
        return out if replacement == REDACTED else out.replace(REDACTED, replacement)
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        for key, item in value.items():
            key = clean_text(key)
            if is_secret_key(key) and item not in (None, "", [], {}):
                result[key] = replacement
            else:
                result[key] = _walk(item, replacement)
        return result
    if isinstance(value, list):
        return [_walk(item, replacement) for item in value]
    return value


def redact_or_marker(value: Any) -> Any:
    """:func:`redact`, failing closed: on any error the marker, never the value."""
    try:
        return redact(value)
    except Exception:
        return REDACTION_FAILED
