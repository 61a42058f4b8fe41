"""The Memory, Retrieval, Toolset and ToolProvider suites pass against small, honest
reference implementations (and the kernel's own in-memory ones), and fail against broken
ones (run in a separate pytest process)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
from lightagent import tool
from lightagent.memory import InMemoryMemory
from lightagent.retrieval import InMemoryRetrieval
from lightagent.toolsets import FunctionToolset
from lightagent_contracts.suites.memory import MemoryContract
from lightagent_contracts.suites.retrieval import RetrievalContract
from lightagent_contracts.suites.tool_provider import ToolProviderContract
from lightagent_contracts.suites.toolset import ToolsetContract


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}


class DictMemory:
    """A reference memory: per-user lists, word-overlap retrieval."""

    def __init__(self) -> None:
        self.items: dict[str, list[str]] = {}

    def store(self, data: str, user_id: str) -> dict:
        self.items.setdefault(user_id, []).append(data)
        return {"stored": True}

    def retrieve(self, query: str, user_id: str) -> dict:
        hits = [m for m in self.items.get(user_id, []) if _words(m) & _words(query)]
        return {"results": [{"memory": m, "user_id": user_id} for m in hits]}


class ListRetrieval:
    """A reference retrieval provider over dict documents."""

    def __init__(self) -> None:
        self.docs: dict[str, dict] = {}

    def ingest(self, documents: list[dict]) -> list[str]:
        for doc in documents:
            self.docs[doc["document_id"]] = doc
        return [d["document_id"] for d in documents]

    def remove(self, document_id: str) -> bool:
        return self.docs.pop(document_id, None) is not None

    def search(self, query: str, *, limit: int = 5, **filters) -> list[dict]:
        docs = [d for d in self.docs.values() if all(d.get(k) == v for k, v in filters.items())]
        scored = [(len(_words(d["content"]) & _words(query)), d) for d in docs]
        ranked = [(score, d) for score, d in sorted(scored, key=lambda x: -x[0]) if score]
        return [
            {
                "document_id": d["document_id"],
                "chunk_id": d["document_id"],
                "content": d["content"],
                "score": float(score),
            }
            for score, d in ranked[:limit]
        ]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


class TestReferenceMemory(MemoryContract):
    property_examples_slow = 200  # a test double: the kernel's backends run the thousands

    @pytest.fixture
    def make_memory(self):
        return DictMemory


class TestReferenceRetrieval(RetrievalContract):
    @pytest.fixture
    def make_retrieval(self):
        return ListRetrieval


class TestKernelInMemoryMemory(MemoryContract):
    @pytest.fixture
    def make_memory(self):
        return InMemoryMemory


class TestKernelInMemoryRetrieval(RetrievalContract):
    @pytest.fixture
    def make_retrieval(self):
        return InMemoryRetrieval


class TestFunctionToolset(ToolsetContract):
    @pytest.fixture
    def make_toolset(self):
        return lambda: FunctionToolset([add, shout], namespace="ref", namespace_tools=True)

    @pytest.fixture
    def toolset_examples(self):
        return [("add", {"a": 2, "b": 3}, lambda out: out == "5")]


class TestReferenceTools(ToolProviderContract):
    @pytest.fixture
    def tools(self):
        return [add, shout]

    @pytest.fixture
    def tool_examples(self):
        return [
            ("add", {"a": 2, "b": 3}, lambda out: out == "5"),
            ("shout", {"text": "hi"}, lambda out: out == "HI"),
        ]


BROKEN = '''
import pytest
from lightagent import tool
from lightagent.toolsets import BaseToolset, ToolDefinition
from lightagent_contracts.suites.memory import MemoryContract
from lightagent_contracts.suites.retrieval import RetrievalContract
from lightagent_contracts.suites.tool_provider import ToolProviderContract
from lightagent_contracts.suites.toolset import ToolsetContract


class SharedMemory:
    """Broken: ignores user_id, so every user sees every memory."""

    def __init__(self):
        self.items = []

    def store(self, data, user_id):
        self.items.append(data)

    def retrieve(self, query, user_id):
        return {"results": [{"memory": m} for m in self.items]}


@tool
def first(x: int) -> int:
    """One."""
    return x


@tool(name="first")
def second(x: int) -> int:
    """Two."""
    return x


class Lenient(BaseToolset):
    """Broken: answers success for tools it does not have."""

    def list_tools(self):
        return [ToolDefinition("ping", "Ping.", {"type": "object", "properties": {}})]

    def call_tool(self, name, arguments, context):
        return "pong"


class LimitThenFilter:
    """Broken: applies filters after the limit, so a small tenant finds nothing."""

    def __init__(self):
        self.docs = {}

    def ingest(self, documents):
        for doc in documents:
            self.docs[doc["document_id"]] = doc

    def remove(self, document_id):
        self.docs.pop(document_id, None)

    def search(self, query, *, limit=5, **filters):
        words = set(query.lower().split())
        hits = [d for d in self.docs.values() if words & set(d["content"].lower().split())]
        hits = hits[:limit]
        hits = [d for d in hits if all(d.get(k) == v for k, v in filters.items())]
        return [dict(d, citation_id="c:" + d["document_id"], score=1.0) for d in hits]


class TestBrokenToolset(ToolsetContract):
    @pytest.fixture
    def make_toolset(self):
        return Lenient


class TestBrokenRetrieval(RetrievalContract):
    @pytest.fixture
    def make_retrieval(self):
        return LimitThenFilter


class TestBrokenMemory(MemoryContract):
    @pytest.fixture
    def make_memory(self):
        return SharedMemory


class TestBrokenTools(ToolProviderContract):
    @pytest.fixture
    def tools(self):
        return [first, second]
'''


def test_broken_implementations_fail_the_suites(tmp_path):
    (tmp_path / "test_broken.py").write_text(textwrap.dedent(BROKEN))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rf",
            "-m",
            "not slow",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout
    failed = set(re.findall(r"FAILED \S+::(\w+::\w+)", proc.stdout))
    assert failed == {
        "TestBrokenMemory::test_users_are_isolated",
        "TestBrokenMemory::test_results_are_attributed_to_their_user",
        "TestBrokenMemory::test_lookalike_wildcard_and_path_ids_are_other_users",
        "TestBrokenMemory::test_tenants_are_isolated_through_the_policy",
        "TestBrokenMemory::test_tenants_of_the_security_context_are_isolated",
        "TestBrokenMemory::test_adversarial_ids_and_queries_find_no_foreign_record",
        "TestBrokenTools::test_names_are_valid_and_unique",
        "TestBrokenToolset::test_unknown_tool_is_refused",
        "TestBrokenRetrieval::test_filters_apply_before_the_limit",
    }, proc.stdout
