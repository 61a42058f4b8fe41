"""``MemoryPolicy`` on its own: ids, every retrieval filter, every write check, promotion, and
refusing a bad configuration — each failing closed."""

from __future__ import annotations

import datetime as dt
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lightagent import (
    GuardrailDecision,
    LightAgentError,
    MemoryAdmissionDecision,
    MemoryPolicy,
    MemoryPromotionDecision,
    MemoryScope,
)
from lightagent_memory.scope import agent_memory_user_id


def item(text="a fact", owner="alice", **meta):
    meta.setdefault("source", "user")
    meta.setdefault("scope", "user")
    return {"memory": text, "user_id": owner, "metadata": meta}


def test_namespaces_scope_user_ids_as_the_seeds_do():
    policy = MemoryPolicy(namespace="tenant-a")
    assert policy.scoped_user_id("alice") == "tenant-a:alice"
    assert MemoryPolicy().scoped_user_id("alice") == "alice"
    assert policy.agent_user_id("writer") == "tenant-a:agent:writer"


@settings(max_examples=300, deadline=None)
@given(
    a=st.tuples(st.sampled_from(["t1", "t1.x", "t2", None]), st.text(max_size=12)),
    b=st.tuples(st.sampled_from(["t1", "t1.x", "t2", None]), st.text(max_size=12)),
)
def test_no_tenant_and_user_can_spell_another_pair_or_an_agent(a, b):
    scoped = [MemoryPolicy(namespace=ns).scoped_user_id(uid) for ns, uid in (a, b)]
    if a != b:
        assert scoped[0] != scoped[1], (a, b, scoped)
    assert scoped[0] != agent_memory_user_id(b[1], b[0])


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        ({"memory": "no owner", "metadata": {"source": "user"}}, "unattributed"),
        (item(owner="bob"), "other_user"),
        (item(owner="ALICE"), "other_user"),
        ({"memory": "no source", "user_id": "alice"}, "no_source"),
        (item(source="web"), "source"),
        (item(scope="shared-x"), "scope"),
        (item(agent_name="intruder"), "agent"),
        (item(trust_level="low"), "trust"),
        (item(confidence=0.2), "confidence"),
        (item(), "confidence"),  # no confidence at all, with a minimum set
        (item(confidence=0.9, expires_at=time.time() - 1), "expired"),
        (item(confidence=0.9, expires_at="2001-01-01T00:00:00Z"), "expired"),
        (item(confidence=0.9, expiration_date="2001-01-01"), "expired"),
        (item(confidence=0.9, expires_at="next tuesday"), "expired"),  # unreadable: fail closed
        (item(confidence=0.9, injectable=False), "not_injectable"),
        (item(confidence=0.9, source="reflection"), "unpromoted"),
        (item(confidence=0.9, source="reflection", promotion_status="promoted"), "unpromoted"),
        ("a bare string is not a result", "malformed"),
    ],
)
def test_each_retrieval_filter_names_its_reason(result, reason):
    policy = MemoryPolicy(
        allowed_sources=("user", "reflection"),
        allowed_scopes=("user",) if reason == "scope" else None,
        allowed_agent_names=("writer",) if reason == "agent" else None,
        allowed_trust_levels=("high",) if reason == "trust" else None,
        min_confidence=0.5,
    )
    assert policy.result_reason(result, "alice") == reason


def test_what_passes_every_filter():
    policy = MemoryPolicy(min_confidence=0.5, allowed_trust_levels=("high",))
    fresh = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    assert policy.allows_result(
        item(confidence=0.9, trust_level="high", expires_at=fresh.isoformat()), "alice"
    )
    promoted = item(
        confidence=0.9,
        trust_level="high",
        source="reflection",
        scope="agent",
        promotion_status="promoted",
        injectable=True,
    )
    assert policy.allows_result(promoted, "alice")
    assert MemoryPolicy(enforce_expires_at=False).allows_result(item(expires_at=1), "alice")
    legacy = MemoryPolicy(require_promotion_for_internal_memory=False)
    assert legacy.allows_result(item(source="reflection"), "alice")


def test_a_namespace_refuses_results_of_another_namespace():
    policy = MemoryPolicy(namespace="tenant-a")
    assert policy.result_reason(item(owner="tenant-a:alice"), "tenant-a:alice") is None
    assert policy.result_reason(item(owner="tenant-b:alice"), "tenant-a:alice") == "other_user"
    assert policy.result_reason(item(owner="alice"), "tenant-a:alice") == "other_user"
    marked = item(owner="tenant-a:alice", namespace="tenant-b")
    assert policy.result_reason(marked, "tenant-a:alice") == "other_namespace"


def test_unattributed_results_only_when_asked_and_never_another_users():
    lenient = MemoryPolicy(allow_unattributed_results=True)
    assert lenient.allows_result({"memory": "anything"}, "alice")
    assert not lenient.allows_result({"memory": "bob's", "user_id": "bob"}, "alice")
    assert not MemoryPolicy().allows_result({"memory": "anything"}, "alice")


@pytest.mark.parametrize(
    ("kwargs", "data", "count", "recent", "reason"),
    [
        ({}, "", 0, (), "empty"),
        ({}, "   ", 0, (), "empty"),
        ({}, None, 0, (), "empty"),
        ({"max_writes_per_run": 1}, "a fine memory", 1, (), "limit"),
        ({"min_write_length": 10}, "short", 0, (), "too_short"),
        ({"max_write_length": 5}, "far too long", 0, (), "too_long"),
        ({}, "my key is sk-proj-0123456789abcdefghijklmnop", 0, (), "secret"),
        ({}, "password=hunter2hunter2", 0, (), "secret"),
        ({"reject_write_patterns": [r"\bSSN\b"]}, "my SSN is on file", 0, (), "pattern"),
        ({"reject_write_patterns": [re.compile("x{3}")]}, "xxx marks it", 0, (), "pattern"),
        ({"require_write_admission": True}, "a fine memory", 0, (), "admission_required"),
    ],
)
def test_each_write_check_names_its_reason(kwargs, data, count, recent, reason):
    decision = MemoryPolicy(**kwargs).allows_write(
        data, {}, write_count=count, recent_fingerprints=recent
    )
    assert not decision.allowed and decision.reason == reason


def test_duplicates_are_the_same_text_for_the_same_id():
    policy = MemoryPolicy(reject_duplicate_writes=True)
    ctx = {"memory_user_id": "alice"}
    known = {policy.write_fingerprint("I like tea.", ctx)}
    assert policy.allows_write("i  LIKE tea.", ctx, recent_fingerprints=known).reason == "duplicate"
    assert policy.allows_write(
        "I like tea.", {"memory_user_id": "bob"}, recent_fingerprints=known
    ).allowed
    assert MemoryPolicy().allows_write("I like tea.", ctx, recent_fingerprints=known).allowed


@pytest.mark.parametrize(
    ("answer", "allowed", "reason", "value"),
    [
        (None, False, "memory_write_admission returned NoneType", None),
        (True, True, None, None),
        (False, False, "memory_write_admission", None),
        ("not about work", False, "not about work", None),
        ({"allowed": True, "value": "rewritten"}, True, None, "rewritten"),
        (MemoryAdmissionDecision(False, "policy says no"), False, "policy says no", None),
        (GuardrailDecision(False, "guard says no"), False, "guard says no", None),
        (42, False, "memory_write_admission returned int", None),
    ],
)
def test_the_admission_callback_may_allow_refuse_or_rewrite(answer, allowed, reason, value):
    decision = MemoryPolicy(memory_write_admission=lambda data, ctx: answer).allows_write(
        "a memory", {}
    )
    assert (decision.allowed, decision.reason, decision.value) == (allowed, reason, value)


def test_a_failing_callback_refuses_and_names_only_the_exception_type():
    def boom(data, ctx):
        raise ValueError(f"cannot judge {data}")

    decision = MemoryPolicy(memory_write_admission=boom).allows_write("the secret plan", {})
    assert not decision.allowed
    assert decision.reason == "memory_write_admission failed: ValueError"
    rewrite_leaks = MemoryPolicy(
        memory_write_admission=lambda d, c: {"allowed": True, "value": "token=abcd1234efgh5678"}
    )
    assert rewrite_leaks.allows_write("fine", {}).reason == "secret"


def test_promotion_decisions_from_the_callback():
    from lightagent import MemoryCandidate

    candidate = MemoryCandidate("a reflection", "agent:w", "alice")
    assert MemoryPolicy().allows_promotion(candidate, {}).action == "keep"
    for answer, action in (
        (True, "approve"),
        (False, "reject"),
        ("approve", "approve"),
        ("not trustworthy", "reject"),
        ({"action": "rewrite", "value": "better"}, "rewrite"),
        ({"approved": True}, "approve"),
        (MemoryPromotionDecision.keep(), "keep"),
    ):
        policy = MemoryPolicy(memory_promotion_admission=lambda c, ctx, a=answer: a)
        assert policy.allows_promotion(candidate, {}).action == action, answer

    def boom(c, ctx):
        raise RuntimeError("reviewer service down")

    failed = MemoryPolicy(memory_promotion_admission=boom).allows_promotion(candidate, {})
    assert failed.action == "keep" and failed.metadata["blocked"]
    assert failed.reason == "memory_promotion_admission failed: RuntimeError"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"namespace": "tenant:a"},
        {"namespace": ""},
        {"namespace": "../etc"},
        {"reject_write_patterns": ["(unclosed"]},
        {"max_writes_per_run": -1},
        {"min_write_length": "8"},
        {"min_confidence": "high"},
        {"memory_write_admission": "yes"},
        {"allowed_sources": 5},
    ],
)
def test_a_bad_configuration_is_refused(kwargs):
    with pytest.raises(LightAgentError) as info:
        MemoryPolicy(**kwargs)
    assert info.value.code == "LA-CONFIG"


def test_decisions_and_scopes_are_validated():
    with pytest.raises(LightAgentError) as info:
        MemoryPromotionDecision("maybe")
    assert info.value.code == "LA-VALIDATION"
    with pytest.raises(LightAgentError):
        MemoryPromotionDecision.rewrite("  ")
    assert MemoryPromotionDecision.approve().promotes and not MemoryPromotionDecision.keep().final
    assert MemoryScope.reflection("w").internal and not MemoryScope.user().internal
    scope = MemoryScope(source="tool", confidence=0.7, metadata={"x": 1})
    assert MemoryScope.from_metadata(scope.to_metadata()) == scope
    assert MemoryPolicy(namespace="a").with_namespace("b").namespace == "b"
    with pytest.raises(LightAgentError):
        MemoryPolicy().with_namespace("a:b")
