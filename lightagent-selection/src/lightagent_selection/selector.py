"""``BM25Selector``: the tool selector the loop asks which tools to offer each model request.

The selector keeps one :class:`~lightagent_selection.index.ToolIndex` and the schema token
counts of each registry layer it has seen (the agent's registry, a run's overlay), brought
up to date from the layer's ``version`` when it changed: an index is built once and then
only the tools registered or removed since are re-indexed. An overlay is ranked together
with its bases, with the term statistics of all of them.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lightagent.errors import ValidationError
from lightagent.tools import Tool

from lightagent_selection.index import (
    OFFER_ALL_UP_TO,
    ToolIndex,
    called_tools,
    layered_scores,
    query_terms,
    strong_match,
    top_scores,
)

__all__ = ["SELECTOR", "BM25Selector", "estimate_tokens", "schema_tokens", "selection_report"]


def estimate_tokens(schema: Any) -> int:
    """A provider-neutral token estimate of a schema: ``len(json) / 4``."""
    return max(1, len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False)) // 4)


_NOTHING: frozenset[str] = frozenset()


class _Layer:
    """One registry layer as last seen: its tools, their index and schema token counts."""

    def __init__(self) -> None:
        self.version = -1
        self.tools: dict[str, Tool] = {}
        self.index = ToolIndex()
        # Counted at the first report: a run that records no events serializes no schema.
        self.tokens: dict[str, int] | None = None
        self.tokens_total = 0

    def sync(self, registry: Any) -> None:
        version = registry.version  # read first: a later change is seen at the next sync
        if version == self.version:
            return
        current = registry.own_tools()
        for name in [n for n in self.tools if n not in current]:
            self.index.remove(name)
            if self.tokens is not None:
                self.tokens_total -= self.tokens.pop(name)
            del self.tools[name]
        for name, item in current.items():
            if self.tools.get(name) is not item:
                self.index.add(item)
                self.tools[name] = item
                if self.tokens is not None:
                    self._count(self.tokens, name, item)
        self.version = version

    def counted(self) -> dict[str, int]:
        """Schema tokens by tool name (counted on first use, then kept in step)."""
        if self.tokens is None:
            self.tokens = {}
            for name, item in self.tools.items():
                self._count(self.tokens, name, item)
        return self.tokens

    def _count(self, tokens: dict[str, int], name: str, item: Tool) -> None:
        count = estimate_tokens(item.openai_schema())
        self.tokens_total += count - tokens.get(name, 0)
        tokens[name] = count


class BM25Selector:
    """Ranks tools with BM25 over their names, titles, descriptions and parameters.

    Registered as the ``bm25`` tool selector; the loop uses it through
    ``lightagent.tools.selector.ToolSelector``, users through ``ToolRegistry.select``,
    ``offer`` and ``selection_report``.
    """

    def __init__(self) -> None:
        self._layers: weakref.WeakKeyDictionary[Any, _Layer] = weakref.WeakKeyDictionary()
        # Runs in several threads may rank (and so sync) the same registry at once.
        self._lock = threading.RLock()

    def _synced(self, registry: Any) -> list[tuple[_Layer, frozenset[str]]]:
        """The registry's layers, bottom first, each synced and with the names shadowed above
        it. Call with the lock held."""
        layers = []
        for item in registry.layers():
            layer = self._layers.get(item)
            if layer is None:
                layer = self._layers[item] = _Layer()
            layer.sync(item)
            layers.append(layer)
        if len(layers) == 1:  # the common case: nothing shadowed
            return [(layers[0], _NOTHING)]
        out: list[tuple[_Layer, frozenset[str]]] = []
        above = _NOTHING
        for layer in reversed(layers):
            out.append((layer, above))
            above = above.union(layer.tools)
        return out[::-1]

    def index(self, registry: Any) -> ToolIndex:
        """The index of ``registry``'s own layer, brought up to date."""
        with self._lock:
            return self._synced(registry)[-1][0].index

    def _ranked(
        self, registry: Any, terms: Mapping[str, float], limit: int, query: str | None = None
    ) -> tuple[list[tuple[float, str]], bool]:
        """The ``limit`` best ``(score, name)`` pairs, and (given ``query``) whether the
        match is strong."""
        with self._lock:
            layers = [(layer.index, hidden) for layer, hidden in self._synced(registry)]
            ranked = top_scores(layered_scores(layers, terms), limit)
            if query is None:
                return ranked, False
            return ranked, strong_match(layers, query, ranked[0][1] if ranked else None)

    def select(
        self,
        registry: Any,
        query: str,
        *,
        limit: int = 8,
        messages: Sequence[Mapping[str, Any]] | None = None,
        always: Iterable[str] = (),
    ) -> list[str]:
        """The names of the ``limit`` tools that best match ``query`` (BM25), best first.

        ``messages`` (the last few are used at half weight) help with follow-ups;
        ``always`` names are put first and do not count against ``limit``. Tools that
        share no term with the query are not returned.
        """
        if not isinstance(limit, int) or limit < 0:
            raise ValidationError(
                "LA-VALIDATION", f"limit must be a non-negative int, got {limit!r}"
            )
        pinned = [n for n in dict.fromkeys(always) if registry.get(n) is not None]
        terms = query_terms(query or "", messages)
        ranked, _ = self._ranked(registry, terms, limit + len(pinned))
        rest = [name for _, name in ranked if name not in pinned][:limit]
        return pinned + rest

    def offer(
        self,
        registry: Any,
        query: str,
        *,
        limit: int = 8,
        messages: Sequence[Mapping[str, Any]] = (),
    ) -> list[str] | None:
        """The tools to offer for one model request, or None for all of them (the loop's choice).

        Recall comes first. A weak match (see :func:`~lightagent_selection.index.strong_match`)
        offers every tool when there are at most :data:`OFFER_ALL_UP_TO`, else the
        ``4 * limit`` best. Otherwise the ``limit`` best are offered and every tool scoring at
        least half the best (``4 * limit`` at most). Tools called earlier in
        ``messages`` are always offered, so a follow-up keeps what the conversation uses.
        """
        history = list(messages)
        used = [n for n in called_tools(history) if registry.get(n) is not None]
        terms = query_terms(query or "", history[-4:])
        ranked, strong = self._ranked(registry, terms, 4 * limit, query or "")
        if strong:
            floor = ranked[0][0] / 2
            ranked = [pair for i, pair in enumerate(ranked) if i < limit or pair[0] >= floor]
        elif len(registry) <= OFFER_ALL_UP_TO:
            return None
        return list(dict.fromkeys(used + [name for _, name in ranked])) or None

    def schema_tokens(self, registry: Any, names: Iterable[str] | None = None) -> int:
        """Estimated tokens (``len(json)/4``) of all of ``registry``'s schemas, or of ``names``."""
        with self._lock:
            layers = [(layer.counted(), layer, hidden) for layer, hidden in self._synced(registry)]
            if names is None:
                shadowed = sum(
                    tokens[n] for tokens, _, hidden in layers for n in hidden & tokens.keys()
                )
                return sum(layer.tokens_total for _, layer, _ in layers) - shadowed
            total = 0
            for name in dict.fromkeys(names):  # the topmost layer holding a name is its tool
                total += next((t[name] for t, _, _ in reversed(layers) if name in t), 0)
            return total

    def report(self, registry: Any, kept: Iterable[str]) -> dict[str, int]:
        """``{"tools_total", "tools_kept", "schema_tokens_total", "schema_tokens_kept"}``."""
        kept_names = [name for name in dict.fromkeys(kept) if registry.get(name) is not None]
        return {
            "tools_total": len(registry),
            "tools_kept": len(kept_names),
            "schema_tokens_total": self.schema_tokens(registry),
            "schema_tokens_kept": self.schema_tokens(registry, kept_names),
        }


#: The selector the plugin registers (one index per registry layer, shared by every agent).
SELECTOR = BM25Selector()


def selection_report(registry: Any, kept: Iterable[str]) -> dict[str, int]:
    """``{"tools_total", "tools_kept", "schema_tokens_total", "schema_tokens_kept"}`` for a trace."""
    return SELECTOR.report(registry, kept)


def schema_tokens(registry: Any, names: Iterable[str] | None = None) -> int:
    """Estimated tokens (``len(json)/4``) of all of ``registry``'s schemas, or of ``names``."""
    return SELECTOR.schema_tokens(registry, names)
