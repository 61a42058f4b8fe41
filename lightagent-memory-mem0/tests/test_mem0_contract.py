"""``Mem0Memory`` passes the memory contract: stored text as given, and with mem0's LLM
extracting the facts (the loopback server answers as the extraction model)."""

from __future__ import annotations

import pytest
from lightagent_contracts.suites.memory import MemoryContract


class TestMem0Verbatim(MemoryContract):
    # Qdrant's embedded mode scans every point per search: fewer examples than the SQL pool.
    property_examples = 6
    property_examples_slow = 400

    @pytest.fixture
    def make_memory(self, make_mem0):
        return lambda: make_mem0(infer=False)


class TestMem0Inferred(MemoryContract):
    property_examples = 4
    property_examples_slow = 100

    @pytest.fixture
    def make_memory(self, make_mem0):
        return lambda: make_mem0(infer=True)
