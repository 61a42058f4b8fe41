"""The memory contract suite (``MemoryProtocol``: ``store(data, user_id)``, ``retrieve(query, user_id)``).

Subclass :class:`MemoryContract` and provide ``make_memory``: a zero-argument factory
returning a fresh, empty memory backend. ``retrieve`` returns the mem0 shape
``{"results": [{"memory": str, ...}]}``::

    class TestMyMemory(MemoryContract):
        @pytest.fixture
        def make_memory(self, tmp_path):
            return lambda: MyMemory(tmp_path / "mem.db")
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["MemoryContract"]


def _memories(result: Any) -> list[str]:
    assert isinstance(result, dict), f"retrieve must return a dict, got {type(result).__name__}"
    items = result.get("results")
    assert isinstance(items, list), 'retrieve must return {"results": [...]}'
    texts = []
    for item in items:
        assert isinstance(item, dict) and isinstance(item.get("memory"), str), item
        texts.append(item["memory"])
    return texts


def _user() -> str:
    return f"user-{uuid.uuid4().hex[:8]}"


class MemoryContract(ContractSuite):
    """Behaviour every memory backend shows. Provide ``make_memory() -> memory``."""

    _contract_suite = True
    __test__ = False

    def test_has_store_and_retrieve(self, make_memory: Callable[[], Any]) -> None:
        memory = make_memory()
        assert callable(memory.store) and callable(memory.retrieve)

    def test_stored_memory_is_retrieved(self, make_memory: Callable[[], Any]) -> None:
        memory, user = make_memory(), _user()
        memory.store("My favourite colour is teal.", user)
        texts = _memories(memory.retrieve("favourite colour", user))
        assert any("teal" in t for t in texts), texts

    def test_users_are_isolated(self, make_memory: Callable[[], Any]) -> None:
        memory, alice, bob = make_memory(), _user(), _user()
        memory.store("Alice's locker code is 4711.", alice)
        texts = _memories(memory.retrieve("locker code", bob))
        assert not any("4711" in t for t in texts), texts

    def test_empty_memory_returns_an_empty_result(self, make_memory: Callable[[], Any]) -> None:
        assert _memories(make_memory().retrieve("anything at all", _user())) == []

    def test_unicode_and_punctuation_survive(self, make_memory: Callable[[], Any]) -> None:
        memory, user = make_memory(), _user()
        memory.store('Der Kunde heißt "Zoë" — 東京 (AND OR NOT *)', user)
        texts = _memories(memory.retrieve("Zoë 東京 (AND OR NOT *)", user))
        assert any("Zoë" in t and "東京" in t for t in texts), texts
