"""Search on both backends: query text is never syntax, CJK, ranking, filters, tenants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lightagent.errors import PolicyError, ValidationError
from lightagent_rag_fts import RetrievalDocument

HOSTILE = [
    '"',
    '"tea',
    "tea'",
    "it's tea",
    "tea AND",
    "AND OR NOT",
    "NOT tea",
    "tea NEAR(green picking, 2)",
    "NEAR/3",
    "*",
    "tea*",
    "^tea",
    "title:tea",
    "body:tea OR title:x",
    "{title body}: tea",
    "(tea",
    "tea)",
    "tea & coffee | !bread <-> :*",
    "-tea +coffee",
    "'; DROP TABLE rag_chunks; --",
    "%_%",
    "\\",
    "tea\x00coffee",
    "\x00",
    "   ",
    "",
    "🍵 tea",
    "x" * 5000,
    "tea " * 1250,
    "".join(chr(c) for c in range(33, 127)),
]


@pytest.fixture
def provider(make_provider: Callable[..., Any]) -> Any:
    provider = make_provider()
    provider.ingest(
        [
            RetrievalDocument(
                "Green tea is steamed or pan-fired soon after picking.",
                title="Green tea",
                document_id="tea",
            ),
            RetrievalDocument(
                "Coffee beans are roasted seeds of the coffea plant.",
                title="Coffee",
                document_id="coffee",
            ),
            RetrievalDocument(
                "绿茶是一种未经发酵的茶，冲泡时水温不宜过高。",  # noqa: RUF001
                title="绿茶",
                document_id="zh-tea",
            ),
            RetrievalDocument(
                "コーヒー豆は焙煎された種子です。", title="コーヒー", document_id="ja-coffee"
            ),
        ]
    )
    return provider


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_give_results_or_nothing_never_an_error(provider: Any, query: str) -> None:
    results = provider.search(query, limit=5)
    assert isinstance(results, list)
    assert all(r.citation_id.startswith("rag:") for r in results)


def test_operator_words_are_searched_as_plain_words(provider: Any) -> None:
    assert [r.document_id for r in provider.search("NOT tea", limit=1)] == ["tea"]
    assert [r.document_id for r in provider.search('"coffea', limit=1)] == ["coffee"]
    assert [r.document_id for r in provider.search("title:coffee*", limit=1)] == ["coffee"]


def test_chinese_and_japanese_text_is_searchable(provider: Any) -> None:
    assert provider.search("绿茶", limit=1)[0].document_id == "zh-tea"
    assert provider.search("水温", limit=1)[0].document_id == "zh-tea"  # a word inside a sentence
    assert provider.search("茶", limit=1)[0].document_id == "zh-tea"  # one character: a prefix
    assert provider.search("焙煎", limit=1)[0].document_id == "ja-coffee"
    assert provider.search("咖啡", limit=5) == []


def test_a_title_match_ranks_above_a_body_match(make_provider: Callable[..., Any]) -> None:
    provider = make_provider()
    provider.ingest(
        [
            RetrievalDocument(
                "Notes about deployment and the rollout.", title="Misc", document_id="body"
            ),
            RetrievalDocument(
                "Notes about the rollout plan.", title="Deployment", document_id="title"
            ),
        ]
    )
    results = provider.search("deployment", limit=2)
    assert [r.document_id for r in results] == ["title", "body"]
    assert results[0].score > results[1].score


def test_more_matching_words_rank_higher(provider: Any) -> None:
    results = provider.search("green tea picking coffee", limit=4)
    assert results[0].document_id == "tea"
    assert results[1].document_id == "coffee"


def test_results_carry_the_document_fields_and_metadata(make_provider: Callable[..., Any]) -> None:
    provider = make_provider()
    provider.ingest(
        {
            "document_id": "guide",
            "content": "The production deployment uses blue-green releases.",
            "title": "Deployment guide",
            "source": "docs/deployment.md",
            "tenant_id": "acme",
            "owner_id": "ops",
            "scope": "team",
            "metadata": {"lang": "en", "version": 3},
        }
    )
    (result,) = provider.search("deployment", tenant_id="acme")
    assert result.citation_id == "rag:guide:0" and result.chunk_id == "guide:0"
    assert (result.title, result.source, result.owner_id, result.scope) == (
        "Deployment guide",
        "docs/deployment.md",
        "ops",
        "team",
    )
    assert result.metadata == {"lang": "en", "version": 3}
    assert provider.search("deployment", tenant_id="acme", lang="en", version=3)
    assert provider.search("deployment", tenant_id="acme", lang="fr") == []
    assert provider.search("deployment", tenant_id="acme", lang=["fr", "en"])


def test_owner_and_scope_filters_apply_before_the_limit(make_provider: Callable[..., Any]) -> None:
    provider = make_provider()
    provider.ingest(
        [
            RetrievalDocument(f"Incident review {i}.", document_id=f"a-{i}", owner_id="alice")
            for i in range(20)
        ]
        + [
            RetrievalDocument(
                "Incident review of bob.", document_id="b-0", owner_id="bob", scope="private"
            )
        ]
    )
    assert [r.document_id for r in provider.search("incident review", limit=2, owner_id="bob")] == [
        "b-0"
    ]
    assert [
        r.document_id for r in provider.search("incident review", limit=2, scope="private")
    ] == ["b-0"]
    assert len(provider.search("incident review", limit=50, owner_id="alice")) == 20


def test_a_search_without_tenant_on_a_tenanted_index_fails_closed(
    make_provider: Callable[..., Any],
) -> None:
    provider = make_provider()
    provider.ingest(RetrievalDocument("Acme pricing sheet.", document_id="p", tenant_id="acme"))
    with pytest.raises(PolicyError) as caught:
        provider.search("pricing")
    assert caught.value.code == "LA-RETRIEVAL-TENANT" and caught.value.hint
    assert provider.search("pricing", tenant_id="acme")[0].document_id == "p"
    assert provider.search("pricing", tenant_id="globex") == []
    assert provider.search("", limit=5) == []  # nothing asked, nothing refused


def test_require_tenant_can_be_forced_or_waived(make_provider: Callable[..., Any]) -> None:
    strict = make_provider(require_tenant=True)
    with pytest.raises(PolicyError):
        strict.search("anything")
    open_index = make_provider(require_tenant=False)
    open_index.ingest(RetrievalDocument("Acme pricing sheet.", tenant_id="acme"))
    assert len(open_index.search("pricing")) == 1


def test_a_filter_name_that_is_not_a_plain_key_is_refused(provider: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        provider.search("tea", **{"x') OR 1=1 --": "y"})
    assert caught.value.code == "LA-VALIDATION"


def test_limit_bounds(provider: Any) -> None:
    # issue 28: as the seeds, a limit below 1 is a mistake, not an empty answer
    for bad in (0, -3, True, "5"):
        with pytest.raises(ValidationError) as caught:
            provider.search("tea", limit=bad)
        assert caught.value.code == "LA-VALIDATION"
    with pytest.raises(ValidationError):
        provider.search("", limit=0)
    assert len(provider.search("tea coffee 茶", limit=10_000)) <= 100


def test_longer_words_match_as_prefixes_below_the_exact_word(
    make_provider: Callable[..., Any],
) -> None:
    provider = make_provider()
    provider.ingest(
        [
            RetrievalDocument("Notes on the deployment pipeline.", document_id="longer"),
            RetrievalDocument("How we deploy on Fridays.", document_id="exact"),
            RetrievalDocument("A cup of tea with the team.", document_id="tea"),
        ]
    )
    assert [r.document_id for r in provider.search("deploy", limit=5)] == ["exact", "longer"]
    assert [r.document_id for r in provider.search("teams", limit=5)] == []  # no stemming
    assert [r.document_id for r in provider.search("tea", limit=5)] == ["tea"]
