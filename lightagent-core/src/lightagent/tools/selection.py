"""Adaptive tool selection: a local BM25 ranker over tool names, titles and descriptions.

With hundreds or thousands of registered tools, sending every schema costs tokens and
confuses models. :class:`ToolIndex` keeps an inverted index (built once, updated on each
register) and ranks tools for a query in time proportional to the postings of the
query's terms, not to the number of tools. No model call, no network, no dependency.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lightagent.tools.decorator import Tool

__all__ = ["ToolIndex", "estimate_tokens", "query_terms", "selection_report", "tokenize"]

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


class ToolIndex:
    """An incrementally maintained BM25 index of tools."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, float]] = {}
        self._docs: dict[str, Counter[str]] = {}
        self._lengths: dict[str, float] = {}
        self._total_length = 0.0

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

    def _idf(self, term: str) -> float:
        n = len(self._docs)
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _term_score(self, idf: float, tf: float, length: float, average: float) -> float:
        return idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / average))

    def scores(self, terms: Mapping[str, float]) -> dict[str, float]:
        """BM25 score of every tool that shares a term with the query."""
        if not self._docs:
            return {}
        average = self._total_length / len(self._docs) or 1.0
        scores: dict[str, float] = {}
        for term, weight in terms.items():
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = self._idf(term) * weight
            for name, tf in posting.items():
                scores[name] = scores.get(name, 0.0) + self._term_score(
                    idf, tf, self._lengths[name], average
                )
        return scores

    def score_tool(self, tool: Tool, terms: Mapping[str, float]) -> float:
        """Score a tool that is not in the index against this index's statistics."""
        doc = _weighted_terms(tool)
        n = max(len(self._docs), 1)
        average = (self._total_length / n) if self._docs else float(sum(doc.values()) or 1.0)
        length = float(sum(doc.values()))
        total = 0.0
        for term, weight in terms.items():
            tf = doc.get(term)
            if tf:
                total += self._term_score(self._idf(term) * weight, tf, length, average or 1.0)
        return total

    def top(
        self, terms: Mapping[str, float], limit: int, *, exclude: Iterable[str] = ()
    ) -> list[tuple[float, str]]:
        """The ``limit`` best ``(score, name)`` pairs with a positive score, best first."""
        scores = self.scores(terms)
        for name in exclude:
            scores.pop(name, None)
        # Ties are broken by name so that the order is deterministic.
        best = heapq.nsmallest(limit, ((-s, n) for n, s in scores.items() if s > 0))
        return [(-negative, name) for negative, name in best]


def estimate_tokens(schema: Any) -> int:
    """A provider-neutral token estimate of a schema: ``len(json) / 4``."""
    return max(1, len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False)) // 4)


def selection_report(registry: Any, kept: Iterable[str]) -> dict[str, int]:
    """``{"tools_total", "tools_kept", "schema_tokens_total", "schema_tokens_kept"}`` for a trace."""
    kept_names = [name for name in dict.fromkeys(kept) if registry.get(name) is not None]
    return {
        "tools_total": len(registry),
        "tools_kept": len(kept_names),
        "schema_tokens_total": registry.schema_tokens(),
        "schema_tokens_kept": registry.schema_tokens(kept_names),
    }
