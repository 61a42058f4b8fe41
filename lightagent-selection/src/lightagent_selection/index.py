"""A local BM25 ranker over tool names, titles and descriptions.

With hundreds or thousands of registered tools, sending every schema costs tokens and
confuses models. :class:`ToolIndex` keeps an inverted index (built once, updated on each
register) and ranks tools for a query in time proportional to the postings of the
query's terms, not to the number of tools. No model call, no network, no dependency.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lightagent.tools import Tool

__all__ = [
    "OFFER_ALL_UP_TO",
    "ToolIndex",
    "called_tools",
    "layered_scores",
    "query_terms",
    "strong_match",
    "tokenize",
    "top_scores",
]

#: With at most this many tools, a question that matches no tool's name offers all of them.
OFFER_ALL_UP_TO = 64

_WORD = re.compile(r"[A-Za-z]+|[0-9]+|[^\sA-Za-z0-9_\-.,;:!?()\[\]{}\"'`/\\|<>=+*&^%$#@~]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_STOPWORDS = frozenset(
    "a an and are as at be but by can could do does for from get give has have how i in is it "
    "its me my of on or our please show tell that the their them then there these this to us "
    "was we what when where which who will with would you your".split()
)
# Field weights: a name match says more than a description match.
_WEIGHTS = {"name": 3, "title": 2, "description": 1, "params": 1}
_SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))
_K1 = 1.2
_B = 0.75


def _stem(word: str) -> str:
    """A light suffix stripper, so that "trades", "traded" and "trading" all meet "trade"."""
    for suffix, keep in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)] + keep
            break
    # A final "e" is dropped so that "trade" and "trad(ing)" share a stem.
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Lowercased, stemmed terms; snake_case, kebab-case and camelCase are split."""
    terms: list[str] = []
    for chunk in re.split(r"[\s_\-./]+", text or ""):
        if not chunk:
            continue
        for part in _CAMEL.split(chunk):
            for word in _WORD.findall(part):
                word = word.lower()
                if word in _STOPWORDS:
                    continue
                terms.append(_stem(word) if word.isalpha() else word)
    return terms


def _tool_fields(tool: Tool) -> dict[str, str]:
    params = tool.parameters.get("properties") or {}
    param_text = " ".join(
        f"{name} {prop.get('description', '')}" if isinstance(prop, dict) else name
        for name, prop in params.items()
    )
    return {
        "name": tool.name,
        "title": tool.title or "",
        "description": tool.description,
        "params": param_text,
    }


def _weighted_terms(tool: Tool) -> Counter[str]:
    counts: Counter[str] = Counter()
    for field, text in _tool_fields(tool).items():
        weight = _WEIGHTS[field]
        for term in tokenize(text):
            counts[term] += weight
    return counts


def query_terms(
    query: str, messages: Sequence[Mapping[str, Any]] | None = None, *, history_weight: float = 0.5
) -> dict[str, float]:
    """Weighted query terms: the query counts fully, recent message text at ``history_weight``."""
    weights: dict[str, float] = {}
    for term in tokenize(query):
        weights[term] = weights.get(term, 0.0) + 1.0
    for message in list(messages or ())[-4:]:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):  # content parts
            content = " ".join(p.get("text", "") for p in content if isinstance(p, Mapping))
        if isinstance(content, str):
            for term in tokenize(content[:4000]):
                weights[term] = weights.get(term, 0.0) + history_weight
    return weights


def called_tools(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """The names of the tools the assistant called in ``messages``, first call first."""
    names: dict[str, None] = {}
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, Mapping) else None
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, Mapping) else None
            name = function.get("name") if isinstance(function, Mapping) else None
            if isinstance(name, str):
                names[name] = None
    return list(names)


class ToolIndex:
    """An incrementally maintained BM25 index of tools."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, float]] = {}
        self._docs: dict[str, Counter[str]] = {}
        self._lengths: dict[str, float] = {}
        self._total_length = 0.0
        #: term -> how many tools have it in their name or title
        self._named: Counter[str] = Counter()
        self._name_terms: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, name: object) -> bool:
        return name in self._docs

    def add(self, tool: Tool) -> None:
        """Index ``tool`` (replacing an earlier tool of the same name)."""
        self.remove(tool.name)
        terms = _weighted_terms(tool)
        self._docs[tool.name] = terms
        length = float(sum(terms.values()))
        self._lengths[tool.name] = length
        self._total_length += length
        for term, tf in terms.items():
            self._postings.setdefault(term, {})[tool.name] = tf
        named = set(tokenize(tool.name)) | set(tokenize(tool.title or ""))
        self._name_terms[tool.name] = named
        self._named.update(named)

    def remove(self, name: str) -> None:
        """Forget the tool called ``name`` (no-op when unknown)."""
        terms = self._docs.pop(name, None)
        if terms is None:
            return
        self._total_length -= self._lengths.pop(name)
        for term in terms:
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(name, None)
                if not posting:
                    del self._postings[term]
        for term in self._name_terms.pop(name):
            self._named[term] -= 1
            if not self._named[term]:
                del self._named[term]

    def scores(self, terms: Mapping[str, float]) -> dict[str, float]:
        """BM25 score of every tool that shares a term with the query."""
        return layered_scores([(self, ())], terms)

    def top(
        self, terms: Mapping[str, float], limit: int, *, exclude: Iterable[str] = ()
    ) -> list[tuple[float, str]]:
        """The ``limit`` best ``(score, name)`` pairs with a positive score, best first."""
        return top_scores(self.scores(terms), limit, exclude=exclude)


def layered_scores(
    layers: Sequence[tuple[ToolIndex, Collection[str]]], terms: Mapping[str, float]
) -> dict[str, float]:
    """BM25 scores over several indexes taken as one (a registry and its overlays).

    Term statistics count every layer; each layer's ``hidden`` names (shadowed by a
    layer above) score nothing there.
    """
    count = sum(len(index) for index, _ in layers)
    if not count:
        return {}
    average = sum(index._total_length for index, _ in layers) / count or 1.0
    scores: dict[str, float] = {}
    for term, weight in terms.items():
        postings = [(index, index._postings.get(term), hidden) for index, hidden in layers]
        df = sum(len(posting) for _, posting, _ in postings if posting)
        if not df:
            continue
        idf = math.log(1.0 + (count - df + 0.5) / (df + 0.5)) * weight
        for index, posting, hidden in postings:
            for name, tf in (posting or {}).items():
                if name in hidden:
                    continue
                length = index._lengths[name]
                score = idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / average))
                scores[name] = scores.get(name, 0.0) + score
    return scores


def strong_match(
    layers: Sequence[tuple[ToolIndex, Collection[str]]], query: str, best: str | None
) -> bool:
    """Whether ``query`` is good evidence for a ranking: else the ranking may hide the tool.

    Strong: a word of the query is in a tool's name or title, or the best-ranked tool
    ``best`` shares three words with the query. One word shared with some description
    ("notes", "about", "25") is weak. Words under three letters do not count.
    """
    words = {t for t in tokenize(query) if len(t) >= 3 or not t.isascii()}
    if any(word in index._named for word in words for index, _ in layers):
        return True
    for index, hidden in reversed(layers):
        if best is not None and best in index._docs and best not in hidden:
            return len(words & index._docs[best].keys()) >= 3
    return False


def top_scores(
    scores: Mapping[str, float], limit: int, *, exclude: Iterable[str] = ()
) -> list[tuple[float, str]]:
    """The ``limit`` best ``(score, name)`` pairs with a positive score, best first."""
    skip = set(exclude)
    # Ties are broken by name so that the order is deterministic.
    best = heapq.nsmallest(limit, ((-s, n) for n, s in scores.items() if s > 0 and n not in skip))
    return [(-negative, name) for negative, name in best]
