"""The memory contract suite (``MemoryProtocol``: ``store(data, user_id)``, ``retrieve(query, user_id)``).

Subclass :class:`MemoryContract` and provide ``make_memory``: a zero-argument factory
returning a fresh, empty memory backend. Methods may be sync or async. It checks:

* the seeds' contract: ``retrieve`` returns the mem0 shape ``{"results": [{"memory":
  str, "user_id": str, "metadata": {...}}]}``, each result attributed to its user, and
  ``metadata=`` kept when ``store`` takes it;
* isolation: users, case and Unicode look-alikes, wildcards and path tricks are distinct
  ids; tenants (``MemoryPolicy`` namespaces, and the tenant of an agent's
  ``SecurityContext``) never see each other, nor does a run without a tenant see a
  tenant's records; a property test over
  adversarial ids and queries finds zero foreign records (``property_examples`` of them;
  ``property_examples_slow`` in the ``slow`` test);
* the policy through an agent: internal, expired and low-confidence memories are not
  injected, promoted reflections are, and credential-looking writes never reach the
  backend::

    class TestMyMemory(MemoryContract):
        @pytest.fixture
        def make_memory(self, tmp_path):
            return lambda: MyMemory(tmp_path / "mem.db")
"""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

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
            pytest.skip("a two-argument backend: the agent never passes metadata to it")
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
        from lightagent import LightAgent, MemoryPolicy, ScriptedModel

        memory, user = make_memory(), _user()
        model = ScriptedModel(["Noted.", "Your favourite fruit is the quince."])
        agent = LightAgent(model=model, memory=memory, memory_policy=_policy_for(memory))
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
        LightAgent(model=other, memory=memory, memory_policy=MemoryPolicy()).run(
            "What is my favourite fruit?", user_id=_user()
        )
        assert "quince" not in other.requests[0].messages[0]["content"]

    # -- isolation ---------------------------------------------------------------------
    def test_lookalike_wildcard_and_path_ids_are_other_users(
        self, make_memory: Callable[[], Any]
    ) -> None:
        memory, base = make_memory(), f"al{uuid.uuid4().hex[:6]}ce"
        _store(memory, "The vault combination is 90210.", base)
        for other in (
            base.upper(),
            base.capitalize(),
            base.replace("a", "\u0430", 1),  # Cyrillic a
            base + "\u200b",
            f" {base}",
            "*",
            "%",
            "_",
            base[:-1] + "_",
            base[:-1] + "%",
            f"../{base}",
            f"{base}/..",
        ):
            texts = _memories(_retrieve(memory, "vault combination", other))
            assert not any("90210" in t for t in texts), (other, texts)

    def test_tenants_are_isolated_through_the_policy(self, make_memory: Callable[[], Any]) -> None:
        from lightagent import LightAgent, ScriptedModel

        memory, user = make_memory(), _user()
        tenant_a, tenant_b = _policy_for(memory, "tenant-a"), _policy_for(memory, "tenant-b")
        LightAgent(model=ScriptedModel(["ok"]), memory=memory, memory_policy=tenant_a).run(
            "Our launch date is the ninth of May.", user_id=user
        )
        same = ScriptedModel(["ok"])
        LightAgent(model=same, memory=memory, memory_policy=tenant_a).run(
            "When is our launch date?", user_id=user
        )
        assert "ninth of May" in same.requests[0].messages[0]["content"]
        other = ScriptedModel(["ok"])
        LightAgent(model=other, memory=memory, memory_policy=tenant_b).run(
            "When is our launch date?", user_id=user
        )
        assert "ninth of May" not in other.requests[0].messages[0]["content"], (
            "a memory of tenant-a reached tenant-b's prompt for the same user id"
        )

    def test_tenants_of_the_security_context_are_isolated(
        self, make_memory: Callable[[], Any]
    ) -> None:
        from lightagent import LightAgent, ScriptedModel, SecurityContext

        memory, user = make_memory(), _user()

        def ask(tenant: str | None, query: str) -> str:
            model = ScriptedModel(["ok"])
            context = None if tenant is None else SecurityContext(tenant_id=tenant)
            policy = _policy_for(memory)
            agent = LightAgent(
                model=model, memory=memory, memory_policy=policy, security_context=context
            )
            agent.run(query, user_id=user)
            return str(model.requests[0].messages[0]["content"])

        ask("evil", "The vault combination is 90210.")
        for tenant in ("acme", None):
            assert "90210" not in ask(tenant, "What is the vault combination?"), (
                f"a memory of tenant 'evil' reached the prompt of {tenant!r} for the same user id"
            )
        assert "90210" in ask("evil", "What is the vault combination?")

    #: Examples of the adversarial property test in the default run, and in the slow one.
    property_examples = 20
    property_examples_slow = 1000

    def _property(self, make_memory: Callable[[], Any], examples: int) -> None:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        from lightagent_contracts.suites._memory_adversarial import (
            check_no_foreign_records,
            queries,
            user_ids,
        )

        memory = make_memory()

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(ids=st.lists(user_ids(), min_size=1, max_size=3), tail=queries())
        def check(ids: list[str], tail: str) -> None:
            check_no_foreign_records(memory, _call, ids, tail)

        check()

    def test_adversarial_ids_and_queries_find_no_foreign_record(
        self, make_memory: Callable[[], Any]
    ) -> None:
        self._property(make_memory, self.property_examples)

    @pytest.mark.slow
    def test_thousands_of_adversarial_ids_and_queries_find_no_foreign_record(
        self, make_memory: Callable[[], Any]
    ) -> None:
        self._property(make_memory, self.property_examples_slow)

    # -- the policy, through an agent ---------------------------------------------------
    def test_internal_expired_and_unsure_memories_are_not_injected(
        self, make_memory: Callable[[], Any]
    ) -> None:
        from lightagent import LightAgent, MemoryPolicy, ScriptedModel

        memory, user = make_memory(), _user()
        _needs_metadata(memory)
        policy = MemoryPolicy(min_confidence=0.5)
        scoped = policy.scoped_user_id(user)

        def put(text: str, **extra: Any) -> None:
            meta = {"source": "user", "scope": "user", "user_id": scoped, **extra}
            _call(memory.store, text, scoped, metadata=meta)

        put("The harbour ferry leaves at nine.", confidence=0.9)
        put("The harbour ferry leaves at noon.", confidence=0.9, expires_at=time.time() - 60)
        put("The harbour ferry leaves at dawn.", confidence=0.2)
        put("The harbour ferry leaves at dusk.", confidence=0.9, source="reflection", scope="agent")
        model = ScriptedModel(["ok"])
        agent = LightAgent(model=model, memory=memory, memory_policy=policy)
        result = agent.run(
            "When does the harbour ferry leave?", user_id=user, result_format="object", trace=True
        )
        system = model.requests[0].messages[0]["content"]
        assert "at nine" in system, system
        for leaked in ("at noon", "at dawn", "at dusk"):
            assert leaked not in system, f"{leaked!r} reached the prompt"
        reasons = [
            e["data"]["reasons"] for e in result.trace if e["type"] == "memory_retrieve_filter"
        ]
        assert reasons and {"expired", "confidence", "unpromoted"} <= set(reasons[0]), reasons

    def test_a_promoted_reflection_is_injected_once(self, make_memory: Callable[[], Any]) -> None:
        from lightagent import LightAgent, ScriptedModel

        memory, user = make_memory(), _user()
        _needs_metadata(memory)
        model = ScriptedModel(["The tide turns at six.", "ok", "ok"])
        agent = LightAgent(model=model, memory=memory, self_learning=True)
        agent.run("When does the tide turn at the pier?", user_id=user)
        pending = agent.list_memory_candidates()
        assert len(pending) == 1 and pending[0]["source"] == "reflection", pending
        agent.run("Does the tide turn at the pier soon?", user_id=user)
        assert "tide turns at six" not in model.requests[1].messages[0]["content"], (
            "an unpromoted reflection reached the prompt"
        )
        first = agent.promote_memory_candidate(pending[0]["candidate_id"], "approve")
        again = agent.promote_memory_candidate(pending[0]["candidate_id"], "approve")
        assert first.promotes and not first.metadata["idempotent"]
        assert again.metadata["idempotent"], "a second promotion did not see the first"
        agent.run("Tell me about the tide at the pier.", user_id=_user())
        prompt = model.requests[2].messages[0]["content"]
        assert prompt.count("tide turns at six") == 1, prompt

    def test_credential_looking_writes_never_reach_the_backend(
        self, make_memory: Callable[[], Any]
    ) -> None:
        from lightagent import LightAgent, ScriptedModel

        memory, user = make_memory(), _user()
        agent = LightAgent(
            model=ScriptedModel(["ok"]), memory=memory, memory_policy=_policy_for(memory)
        )
        result = agent.run(
            # built here so no literal in this file has a credential's shape
            "My deploy token is " + "ghp_" + "0123456789abcdefghij" + "ABCDEFGHIJ012345",
            user_id=user,
            result_format="object",
            trace=True,
        )
        blocks = [e["data"] for e in result.trace if e["type"] == "memory_write_block"]
        assert blocks and blocks[0]["reason"] == "secret", blocks
        texts = _memories(
            _retrieve(memory, "deploy token", _policy_for(memory).scoped_user_id(user))
        )
        assert not any("ghp_" in t for t in texts), texts


def _policy_for(memory: Any, namespace: str | None = None) -> Any:
    """The default policy, or for a backend that keeps no metadata (so results name no
    source) one that accepts unattributed results — never another user's."""
    from lightagent import MemoryPolicy
    from lightagent.memory.protocol import accepts_keyword

    keeps = accepts_keyword(memory.store, "metadata")
    return MemoryPolicy(namespace=namespace, allow_unattributed_results=not keeps)


def _needs_metadata(memory: Any) -> None:
    from lightagent.memory.protocol import accepts_keyword

    if not accepts_keyword(memory.store, "metadata"):
        pytest.skip("the backend keeps no metadata, so provenance filters have nothing to read")
