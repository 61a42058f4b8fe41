"""The retrieval contract suite (``ingest``, ``search``, ``remove``).

Subclass :class:`RetrievalContract` and provide ``make_retrieval`` (a zero-argument
factory returning a fresh, empty provider) and, unless plain dicts are accepted,
``make_document(content, *, title, document_id)`` building your document type::

    class TestMyRetrieval(RetrievalContract):
        @pytest.fixture
        def make_retrieval(self, tmp_path):
            return lambda: SqliteFTSRetrievalProvider(tmp_path / "rag.db")

        @pytest.fixture
        def make_document(self):
            return lambda content, **kw: RetrievalDocument(content=content, **kw)

Results may be objects or dicts with ``content`` and ``document_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["RetrievalContract"]


def _get(result: Any, key: str) -> Any:
    return result.get(key) if isinstance(result, dict) else getattr(result, key, None)


_DOCS = [
    ("d-tea", "Green tea", "Green tea is steamed or pan-fired soon after picking."),
    ("d-coffee", "Coffee", "Coffee beans are roasted seeds of the coffea plant."),
    ("d-bread", "Bread", "Sourdough bread rises with wild yeast and lactic bacteria."),
]


class RetrievalContract(ContractSuite):
    """Behaviour every retrieval provider shows. Provide ``make_retrieval`` (and ``make_document``)."""

    _contract_suite = True
    __test__ = False

    @pytest.fixture
    def make_document(self) -> Callable[..., Any]:
        """Documents as dicts unless the subclass builds its own type."""
        return lambda content, **kw: {"content": content, **kw}

    @pytest.fixture
    def provider(self, make_retrieval: Callable[[], Any], make_document: Callable[..., Any]) -> Any:
        provider = make_retrieval()
        provider.ingest(
            [make_document(text, title=title, document_id=doc) for doc, title, text in _DOCS]
        )
        return provider

    def test_search_finds_the_matching_document(self, provider: Any) -> None:
        results = list(provider.search("roasted coffea", limit=3))
        assert results, "no result for words that appear in one document"
        assert _get(results[0], "document_id") == "d-coffee"
        assert "coffea" in _get(results[0], "content")

    def test_limit_is_respected(self, provider: Any) -> None:
        assert len(list(provider.search("the", limit=1))) <= 1

    def test_no_match_gives_an_empty_list(self, provider: Any) -> None:
        assert list(provider.search("zyxwvut", limit=5)) == []

    def test_punctuation_and_operators_are_plain_text(self, provider: Any) -> None:
        for query in [
            '"tea',
            "tea AND (",
            "NOT *",
            "coffee:beans",
            "-bread",
            "tea OR",
            "'; DROP TABLE x; --",
        ]:
            list(provider.search(query, limit=5))  # must not raise

    def test_removed_documents_are_not_found(self, provider: Any) -> None:
        provider.remove("d-bread")
        hits = [_get(r, "document_id") for r in provider.search("sourdough yeast", limit=5)]
        assert "d-bread" not in hits

    def test_empty_provider_searches_cleanly(self, make_retrieval: Callable[[], Any]) -> None:
        assert list(make_retrieval().search("anything", limit=5)) == []
