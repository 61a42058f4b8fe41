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

Results may be objects or dicts with ``content`` (or ``text``), ``document_id``, a
citation (``citation_id``, or ``chunk_id`` giving ``rag:<chunk_id>``) and a ``score``;
``search`` may be sync or async; ``**filters`` (``tenant_id`` …) narrow the results
before ``limit`` applies; re-ingesting a ``document_id`` replaces the document. An agent offers the provider to the model as a search tool.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import Any

import pytest

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["RetrievalContract"]


def _get(result: Any, key: str) -> Any:
    return result.get(key) if isinstance(result, dict) else getattr(result, key, None)


def _search(provider: Any, query: str, **kwargs: Any) -> list[Any]:
    result = provider.search(query, **kwargs)
    if inspect.isawaitable(result):

        async def wait() -> Any:
            return await result

        result = asyncio.run(wait())
    return list(result)


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
        results = _search(provider, "roasted coffea", limit=3)
        assert results, "no result for words that appear in one document"
        assert _get(results[0], "document_id") == "d-coffee"
        assert "coffea" in _get(results[0], "content")

    def test_limit_is_respected(self, provider: Any) -> None:
        assert len(list(_search(provider, "the", limit=1))) <= 1

    def test_no_match_gives_an_empty_list(self, provider: Any) -> None:
        assert list(_search(provider, "zyxwvut", limit=5)) == []

    def test_punctuation_and_operators_are_plain_text(self, provider: Any) -> None:
        for query in [
            '"tea',
            "tea AND (",
            "NOT *",
            "coffee:beans",
            "-bread",
            "tea OR",
            "'; DROP TABLE x; --",
            "tea NEAR(green picking)",
            "^tea",
            "tea*",
            "title:tea",
            "tea & coffee | !bread <-> :*",
            "tea\x00coffee",
            "\x00",
            "",
            "x" * 5000,
            "tea " * 1250,
        ]:
            list(_search(provider, query, limit=5))  # must not raise

    def test_operator_words_are_searched_as_words(self, provider: Any) -> None:
        hits = [_get(r, "document_id") for r in _search(provider, "NOT coffea", limit=1)]
        assert hits == ["d-coffee"], "NOT in a query is a word, not an operator"

    def test_reingesting_a_document_replaces_it(
        self, provider: Any, make_document: Callable[..., Any]
    ) -> None:
        provider.ingest(
            [make_document("Oolong is partly oxidised.", title="Tea", document_id="d-tea")]
        )
        assert [_get(r, "document_id") for r in _search(provider, "oolong", limit=5)] == ["d-tea"]
        assert _search(provider, "steamed picking", limit=5) == [], "the old text is gone"

    def test_removed_documents_are_not_found(self, provider: Any) -> None:
        provider.remove("d-bread")
        hits = [_get(r, "document_id") for r in _search(provider, "sourdough yeast", limit=5)]
        assert "d-bread" not in hits

    def test_empty_provider_searches_cleanly(self, make_retrieval: Callable[[], Any]) -> None:
        assert list(_search(make_retrieval(), "anything", limit=5)) == []

    def test_results_carry_text_citation_and_score(self, provider: Any) -> None:
        from lightagent.retrieval.protocol import search_hits

        hits = search_hits(_search(provider, "green tea picking", limit=3))
        assert hits, "no result"
        for hit in hits:
            assert hit.text.strip() and hit.citation.strip()
        assert len({h.citation for h in hits}) == len(hits), "citations must tell results apart"
        assert hits[0].score is not None, "results carry a score"

    def test_filters_apply_before_the_limit(
        self, make_retrieval: Callable[[], Any], make_document: Callable[..., Any]
    ) -> None:
        provider = make_retrieval()
        docs = [
            make_document(
                f"Quarterly revenue report number {i} for tenant {tenant}.",
                title=f"Report {i}",
                document_id=f"{tenant}-{i}",
                tenant_id=tenant,
            )
            for tenant, count in (("big", 12), ("small", 1))
            for i in range(count)
        ]
        provider.ingest(docs)
        hits = _search(provider, "quarterly revenue report", limit=3, tenant_id="small")
        assert [_get(h, "document_id") for h in hits] == ["small-0"], (
            "a tenant filter must narrow the search before the limit, not after"
        )

    def test_an_agent_offers_it_as_a_search_tool_with_citations(self, provider: Any) -> None:
        # retrieval= is lightagent-rag-fts's (lightagent-core[rag-fts]), as memory= is
        # lightagent-memory's in the memory suite
        from lightagent import LightAgent, ScriptedModel

        call = {"name": "search_knowledge", "arguments": {"query": "roasted coffea"}}
        model = ScriptedModel([{"tool_calls": [call]}, "done"])
        agent = LightAgent(model=model, retrieval=provider)
        result = agent.run("what is coffee?", result_format="object")
        assert result.error is None, result.error
        hits = json.loads(result.tool_calls[0]["output"])
        assert hits and all(h.get("citation") for h in hits), hits
        assert "coffea" in hits[0]["text"]
