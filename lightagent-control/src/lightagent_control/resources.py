"""Resource names and ``prefix*`` patterns, checked before any prefix is compared.

A resource is matched by string prefix, so a name that means something else once a
consumer normalises it (``docs/../../etc/passwd``, ``docs/%2e%2e/x``, ``docs\\..\\x``,
fullwidth dots, ``docs//etc``) must never reach the comparison. Rather than rewriting
such a name (the tool would still receive the original), it is refused.

Refused, in the name as written, percent-decoded (repeatedly) and NFKC-normalised:
control characters (NUL included), backslashes, ``.``/``..`` segments (also ``...`` and
dots with spaces, which some platforms trim to ``..``), empty segments other than a
leading ``/``, a trailing ``/`` and the ``//`` after a URL scheme, and percent-encoding
that is not UTF-8. A relative pattern never matches an absolute name.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote

__all__ = ["covers", "pattern_problem", "resource_matches", "resource_problem"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:$")
_DRIVE = re.compile(r"^[A-Za-z]:/")
_DECODE_ROUNDS = 4


def _forms(name: str) -> list[str] | str:
    """The spellings a consumer may turn ``name`` into, or the reason it cannot be decoded."""
    forms = [name]
    text = name
    for _ in range(_DECODE_ROUNDS):
        if "%" not in text:
            break
        try:
            decoded = unquote(text, errors="strict")
        except UnicodeDecodeError:
            return "its percent-encoding is not UTF-8"
        if decoded == text:
            break
        forms.append(decoded)
        text = decoded
    else:
        if "%" in text and unquote(text) != text:
            return "it is percent-encoded more than 4 times over"
    forms += [unicodedata.normalize("NFKC", f) for f in list(forms)]
    return forms


def _form_problem(form: str) -> str | None:
    for char in form:
        if unicodedata.category(char) == "Cc":
            return f"it holds the control character {char!r}"
    if "\\" in form:
        return "it holds a backslash (only '/' separates segments)"
    segments = form.split("/")
    last = len(segments) - 1
    scheme = bool(_SCHEME.match(segments[0]))
    for index, segment in enumerate(segments):
        if "." in segment and not segment.strip(" ."):
            return f"it has a {segment.strip()!r} segment"
        if segment:
            continue
        if index == 0 and last > 0:  # an absolute path
            continue
        if index == last and last > 0:  # a trailing slash
            continue
        if scheme and index in (1, 2):  # scheme://host or file:///path
            continue
        return "it has an empty segment ('//')"
    return None


def resource_problem(name: object) -> str | None:
    """Why ``name`` is not a safe resource name (or pattern base), or None when it is."""
    if not isinstance(name, str):
        return f"it is a {type(name).__name__}, not a string"
    return _problem(name)


@functools.lru_cache(maxsize=4096)
def _problem(name: str) -> str | None:
    # Pure and called for every gate check and narrowing: the same names recur.
    if not name:
        return "it is empty"
    forms = _forms(name)
    if isinstance(forms, str):
        return forms
    for form in forms:
        problem = _form_problem(form)
        if problem is not None:
            return problem
    return None


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` (an exact name or ``prefix*``) is not a safe resource pattern."""
    if pattern == "*":
        return None
    base = pattern[:-1] if pattern.endswith("*") else pattern
    return resource_problem(base)


def _absolute(name: str) -> bool:
    return name.startswith("/") or bool(_DRIVE.match(name))


def resource_matches(patterns: Iterable[str], name: str) -> bool:
    """Whether the (already checked) resource ``name`` is matched by one of ``patterns``."""
    absolute = _absolute(name)
    for pattern in patterns:
        if pattern.endswith("*"):
            base = pattern[:-1]
            if absolute and base and not _absolute(base):
                continue
            if name.startswith(base):
                return True
        elif pattern == name:
            return True
    return False


def covers(pattern: str, entry: str) -> bool:
    """Whether every resource ``entry`` (a name or pattern) stands for is matched by ``pattern``."""
    if pattern.endswith("*"):
        base = entry[:-1] if entry.endswith("*") else entry
        prefix = pattern[:-1]
        if _absolute(base) and prefix and not _absolute(prefix):
            return False
        return base.startswith(prefix)
    return pattern == entry
