"""Provenance of values in a run: where a value the model passes to a tool came from.

A run's sources are the user's request, the system prompt and each tool result, each with
a trust level (:data:`TRUST_LEVELS`). The model copies values from them into tool
arguments; :class:`Provenance` infers where an argument came from by looking the value up
in every source:

* a value of four characters or more matches a source that contains it after
  normalisation (Unicode NFKC, case folded, runs of white space as one space, surrounding
  quotes and punctuation dropped), or contains its compact form (white space, ``-`` and
  ``.`` removed: an IBAN or a phone number written in groups);
* a shorter value, or a number, matches only as a whole word (``"13"`` does not match
  ``"2013"``); a number also matches the same number written otherwise (``100`` and
  ``100.00``);
* a value found in no source has no origin: the model wrote it (a summary, a paraphrase,
  a date it computed, or a value it guessed).

Limits, by design: a paraphrase of untrusted text is not traced; a short value (a first
name, a small id) may match a trusted source by coincidence; a value spelled differently
(translated, re-encoded, split across arguments) is not found. Provenance is evidence for a
policy, not proof; the policy decides what to do when it has none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TRUSTED_LEVELS",
    "TRUST_LEVELS",
    "Origin",
    "Provenance",
    "leaf_values",
    "normalise",
]

#: Trust levels, most trusted first: the user's request, the system prompt, the user's own
#: data (a tool reading what the user wrote or owns), third-party content (mail, shared
#: files, messages others wrote) and the open web.
TRUST_LEVELS: tuple[str, ...] = ("user", "system", "user_data", "third_party", "open_web")
#: The levels a value may come from and still count as the user's.
TRUSTED_LEVELS: frozenset[str] = frozenset({"user", "system", "user_data"})

_SPACE = re.compile(r"\s+")
_EDGE = " \t\n\"'`.,;:!?()[]{}<>"
_COMPACT = re.compile(r"[\s\-.]")
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
_SHORT = 4


def normalise(text: str) -> str:
    """``text`` as values are compared: NFKC, case folded, one space, edges trimmed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", folded).strip(_EDGE)


def _as_number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def leaf_values(value: Any) -> Iterator[Any]:
    """The scalar values inside ``value`` (lists and dicts opened, ``None`` and bools skipped)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaf_values(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from leaf_values(item)
    elif value is not None and not isinstance(value, bool):
        yield value


@dataclass(frozen=True)
class Origin:
    """One source of a run: what it is, how far it is trusted, and which call produced it."""

    #: ``"user"``, ``"system"`` or ``"tool"``.
    kind: str
    #: One of :data:`TRUST_LEVELS`.
    trust: str
    tool: str | None = None
    call_id: str | None = None

    @property
    def trusted(self) -> bool:
        """Whether a value from here counts as the user's."""
        return self.trust in TRUSTED_LEVELS

    def describe(self) -> str:
        """A short name for messages: ``the user's request``, ``tool read_inbox (third_party)``."""
        if self.kind == "user":
            return "the user's request"
        if self.kind == "system":
            return "the system prompt"
        return f"tool {self.tool} ({self.trust})"


@dataclass
class _Source:
    origin: Origin
    text: str
    compact: str
    words: frozenset[str]
    numbers: frozenset[float]


class Provenance:
    """The sources of one run and where a value came from; one per run, never shared."""

    def __init__(self, *, max_chars: int = 2_000_000) -> None:
        self._sources: list[_Source] = []
        self._chars = 0
        self.max_chars = max_chars

    def add(self, text: Any, origin: Origin) -> None:
        """Record ``text`` (anything; not-text is turned into text) as coming from ``origin``."""
        raw = text if isinstance(text, str) else str(text)
        norm = normalise(raw)
        if not norm:
            return
        words = frozenset(re.findall(r"\w+", norm))
        numbers = frozenset(
            n for n in (_as_number(m) for m in _NUMBER.findall(norm)) if n is not None
        )
        self._sources.append(_Source(origin, norm, _COMPACT.sub("", norm), words, numbers))
        self._chars += len(norm)
        # Bound a long run's memory: the oldest tool outputs go first (the request stays).
        while self._chars > self.max_chars and len(self._sources) > 1:
            index = next((i for i, s in enumerate(self._sources) if s.origin.kind == "tool"), None)
            if index is None:
                break
            self._chars -= len(self._sources.pop(index).text)

    @property
    def origins(self) -> list[Origin]:
        """Every recorded source, in order."""
        return [s.origin for s in self._sources]

    def read_untrusted(self) -> bool:
        """Whether the run has read anything from an untrusted source."""
        return any(not s.origin.trusted for s in self._sources)

    def origins_of(self, value: Any) -> list[Origin]:
        """The sources ``value`` (a scalar) can have come from; empty when none holds it."""
        text = normalise(value if isinstance(value, str) else str(value))
        if not text:
            return []
        number = _as_number(text) if _NUMBER.fullmatch(text) else None
        short = len(text) < _SHORT or number is not None
        compact = _COMPACT.sub("", text)
        pattern = re.compile(r"(?<!\w)" + re.escape(text) + r"(?!\w)") if short else None
        found: list[Origin] = []
        for source in self._sources:
            if pattern is not None:
                hit = bool(pattern.search(source.text)) or (
                    number is not None and number in source.numbers
                )
            else:
                hit = text in source.text or (len(compact) >= _SHORT and compact in source.compact)
            if hit:
                found.append(source.origin)
        return found

    def label(self, value: Any) -> str:
        """``"trusted"`` (some trusted source holds every part of it), ``"untrusted"`` (a
        part is held only by untrusted sources) or ``"unknown"`` (no source holds it)."""
        labels = [self._label_one(v) for v in leaf_values(value)]
        if "untrusted" in labels:
            return "untrusted"
        if "unknown" in labels:
            return "unknown"
        return "trusted" if labels else "unknown"

    def _label_one(self, value: Any) -> str:
        origins = self.origins_of(value)
        if not origins:
            return "unknown"
        return "trusted" if any(o.trusted for o in origins) else "untrusted"

    def untrusted_origins(self, value: Any) -> list[Origin]:
        """The untrusted sources of the parts of ``value`` no trusted source holds."""
        out: list[Origin] = []
        for leaf in leaf_values(value):
            origins = self.origins_of(leaf)
            if origins and not any(o.trusted for o in origins):
                out.extend(o for o in origins if o not in out)
        return out

    def holds(self, texts: Iterable[str], *, trusted: bool) -> list[str]:
        """Those of ``texts`` found in a trusted (or in an untrusted) source."""
        out = []
        for text in texts:
            origins = self.origins_of(text)
            if any(o.trusted == trusted for o in origins):
                out.append(text)
        return out
