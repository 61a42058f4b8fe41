"""The tool-selection seam: which of an agent's many tools the loop offers one model request.

The kernel only asks. A distribution answers by registering a :class:`ToolSelector` through
the ``register_tool_selectors`` hook; ``pip install 'lightagent-core[selection]'`` installs
lightagent-selection, a BM25 ranker. With ``filter_tools=True`` (the default) and more tools
than ``RunSpec.filter_threshold``, the loop offers what the selector chooses; with no selector
installed it offers every tool. Runs at or below the threshold never look a selector up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

__all__ = ["ToolSelector", "require_selector", "tool_selector"]


class ToolSelector(Protocol):
    """Chooses tools by relevance; ``registry`` is a ``ToolRegistry`` (an overlay included)."""

    def offer(
        self, registry: Any, query: str, *, limit: int, messages: Sequence[Mapping[str, Any]]
    ) -> list[str] | None:
        """The names to offer for one request about ``query`` (``messages``: the conversation
        before it), or None for every tool."""
        ...

    def select(
        self,
        registry: Any,
        query: str,
        *,
        limit: int,
        messages: Sequence[Mapping[str, Any]] | None,
        always: Iterable[str],
    ) -> list[str]:
        """The ``limit`` names best matching ``query``, best first, ``always`` names first."""
        ...

    def report(self, registry: Any, kept: Iterable[str]) -> dict[str, Any]:
        """What the ``tool_selection`` event records besides ``kept``."""
        ...


def tool_selector() -> ToolSelector | None:
    """The highest-priority registered selector, or None (looked up again only after a
    registration changes)."""
    from lightagent.plugins import get_registry

    return get_registry().derived("tool_selector", _load_selector)  # type: ignore[no-any-return]


def _load_selector(registry: Any) -> ToolSelector | None:
    entry = registry.default("tool_selector")
    selector = None if entry is None else entry.load()
    if isinstance(selector, type):
        selector = selector()
    return selector  # type: ignore[no-any-return]


def require_selector(what: str) -> ToolSelector:
    """The selector, or ``LA-MISSING-EXTRA`` naming lightagent-selection for ``what``."""
    selector = tool_selector()
    if selector is None:
        from lightagent.extras import missing_extra
        from lightagent.vocabulary import distribution

        raise missing_extra(what, distribution("selection"), "selection")
    return selector
