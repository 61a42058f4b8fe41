"""Text as it leaves the process: UTF-8, each lone surrogate written as U+FFFD.

A Python string can hold a lone surrogate (JSON's ``"\\ud800"`` escape decodes to one),
which UTF-8 cannot encode. Wherever text is hashed, stored or sent (idempotency keys and
digests, the event stores, model requests, ``lightagent serve`` answers) it is written with
U+FFFD in its place, so one stray character neither fails a run nor is stored differently
from what was hashed.
"""

from __future__ import annotations

__all__ = ["clean_text", "utf8"]


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (``text`` itself when it has none)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A surrogate pair (two code points) becomes its one character; a lone one U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def utf8(text: str) -> bytes:
    """``text`` encoded as UTF-8, lone surrogates as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return clean_text(text).encode("utf-8")
