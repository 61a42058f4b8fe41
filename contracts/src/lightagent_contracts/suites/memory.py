"""The memory contract suite (``MemoryProtocol``: ``store(data, user_id)``, ``retrieve(query, user_id)``).

Subclass :class:`MemoryContract` and provide ``make_memory``: a zero-argument factory
returning a fresh, empty memory backend. Methods may be sync or async. ``retrieve``
returns the mem0 shape ``{"results": [{"memory": str, "user_id": str, ...}]}``; each
result is attributed to its user (``user_id`` or ``metadata.user_id``) so isolation
filters can check it, and an agent injects and writes memories through the backend::

    class TestMyMemory(MemoryContract):
        @pytest.fixture
        def make_memory(self, tmp_path):
            return lambda: MyMemory(tmp_path / "mem.db")
"""

from __future__ import annotations

import asyncio
import inspect
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


def _call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a sync or async backend method from the (sync) test."""
    result = func(*args, **kwargs)
    if inspect.isawaitable(result):

        async def wait() -> Any:
            return await result

        return asyncio.run(wait())
    return result


def _store(memory: Any, data: str, user: str) -> Any:
    return _call(memory.store, data, user)


def _retrieve(memory: Any, query: str, user: str) -> Any:
    return _call(memory.retrieve, query, user)


class MemoryContract(ContractSuite):
    """Behaviour every memory backend shows. Provide ``make_memory() -> memory``."""

    _contract_suite = True
    __test__ = False

    def test_has_store_and_retrieve(self, make_memory: Callable[[], Any]) -> None:
        memory = make_memory()
        assert callable(memory.store) and callable(memory.retrieve)

    def test_stored_memory_is_retrieved(self, make_memory: Callable[[], Any]) -> None:
        memory, user = make_memory(), _user()
        _store(memory, "My favourite colour is teal.", user)
        texts = _memories(_retrieve(memory, "favourite colour", user))
        assert any("teal" in t for t in texts), texts

    def test_users_are_isolated(self, make_memory: Callable[[], Any]) -> None:
        memory, alice, bob = make_memory(), _user(), _user()
        _store(memory, "Alice's locker code is 4711.", alice)
        texts = _memories(_retrieve(memory, "locker code", bob))
        assert not any("4711" in t for t in texts), texts

    def test_empty_memory_returns_an_empty_result(self, make_memory: Callable[[], Any]) -> None:
        assert _memories(_retrieve(make_memory(), "anything at all", _user())) == []

    def test_unicode_and_punctuation_survive(self, make_memory: Callable[[], Any]) -> None:
        memory, user = make_memory(), _user()
        _store(memory, 'Der Kunde heißt "Zoë" — 東京 (AND OR NOT *)', user)
        texts = _memories(_retrieve(memory, "Zoë 東京 (AND OR NOT *)", user))
        assert any("Zoë" in t and "東京" in t for t in texts), texts

    def test_results_are_attributed_to_their_user(self, make_memory: Callable[[], Any]) -> None:
        from lightagent.memory.protocol import memory_items, result_owner

        memory, user = make_memory(), _user()
        _store(memory, "The project deadline is Friday.", user)
        items = memory_items(_retrieve(memory, "project deadline", user))
        assert items, "nothing retrieved"
        for item in items:
            assert result_owner(item) == user, (
                f"result not attributed to {user!r} (user_id or metadata.user_id): {item}"
            )

    def test_metadata_is_kept_when_the_backend_takes_it(
        self, make_memory: Callable[[], Any]
    ) -> None:
        from lightagent.memory.protocol import accepts_keyword, memory_items

        memory, user = make_memory(), _user()
        if not accepts_keyword(memory.store, "metadata"):
            return  # a two-argument backend: the agent never passes metadata to it
        _call(
            memory.store,
            "Meetings are on Tuesdays.",
            user,
            metadata={"source": "user", "scope": "user", "agent_name": "contract"},
        )
        items = memory_items(_retrieve(memory, "meetings tuesdays", user))
        assert items and any(
            (item.get("metadata") or {}).get("source") == "user" for item in items
        ), items

    def test_an_agent_injects_and_writes_through_it(self, make_memory: Callable[[], Any]) -> None:
        from lightagent import LightAgent, ScriptedModel

        memory, user = make_memory(), _user()
        model = ScriptedModel(["Noted.", "Your favourite fruit is the quince."])
        agent = LightAgent(model=model, memory=memory)
        agent.run("My favourite fruit is the quince.", user_id=user)
        result = agent.run(
            "What is my favourite fruit?", user_id=user, result_format="object", trace=True
        )
        assert result.error is None, result.error
        assert "quince" in model.requests[1].messages[0]["content"], (
            "the first turn was not written, or not retrieved and injected, on the second"
        )
        kinds = [e["type"] for e in result.trace]
        assert "memory_read" in kinds and "memory_write" in kinds, kinds
        other = ScriptedModel(["?"])
        LightAgent(model=other, memory=memory).run("What is my favourite fruit?", user_id=_user())
        assert "quince" not in other.requests[0].messages[0]["content"]
