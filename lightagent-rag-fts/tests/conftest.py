"""Fixtures of the lightagent-rag-fts tests: each provider on a real SQLite file or PostgreSQL.

PostgreSQL tests share one database per test session (``postgres_url`` from
lightagent-contracts), so each provider gets tables of its own (a random prefix).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from lightagent_rag_fts import PostgresFTSRetrievalProvider, SqliteFTSRetrievalProvider


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def make_provider(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Callable[..., Any]]:
    """A factory of fresh, empty providers on each backend; ``**kw`` goes to the constructor."""
    made: list[Any] = []

    def make(**kw: Any) -> Any:
        table = f"rag_{uuid.uuid4().hex[:10]}"
        if request.param == "sqlite":
            provider = SqliteFTSRetrievalProvider(tmp_path / f"{table}.db", **kw)
        else:
            url = request.getfixturevalue("postgres_url")
            provider = PostgresFTSRetrievalProvider(url, **{"table": table, **kw})
        made.append(provider)
        return provider

    yield make
    for provider in made:
        provider.close()
