"""Both full-text providers pass the kit's RetrievalContract."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lightagent_contracts.suites.retrieval import RetrievalContract
from lightagent_rag_fts import RetrievalDocument


class TestFullTextRetrievalContract(RetrievalContract):
    @pytest.fixture
    def make_retrieval(self, make_provider: Callable[..., Any]) -> Callable[[], Any]:
        return make_provider

    @pytest.fixture
    def make_document(self) -> Callable[..., Any]:
        return lambda content, **kw: RetrievalDocument(content=content, **kw)
