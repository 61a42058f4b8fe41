"""SecurityContext, PermissionSet, CapabilityGate and ApprovalToken."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from lightagent.errors import ApprovalError, ConfigurationError, PolicyError
from lightagent_control.capabilities import CapabilityRisk, CapabilitySpec
from lightagent_control.security import (
    ApprovalToken,
    CapabilityGate,
    InMemoryTokenLedger,
    PermissionSet,
    SecurityContext,
)

KEY = "k" * 32


def test_empty_allow_list_narrows_to_nothing():
    parent = PermissionSet()  # unrestricted
    child = parent.narrow(allowed=[])
    assert child.allowed == frozenset()
    assert not child.allows("anything")
    assert parent.allows("anything")
    # and narrowing an empty set again can never bring anything back
    assert not child.narrow(allowed=["anything"]).allows("anything")
    assert not child.narrow(allowed=None).allows("anything")


def test_narrow_intersects_patterns_and_drops_risk():
    parent = PermissionSet(allowed={"tool.*", "memory.read"}, max_risk="L2")
    child = parent.narrow(allowed={"tool.search", "shell.run"}, max_risk=3)
    assert child.allows("tool.search", "L1")
    assert not child.allows("shell.run")
    assert child.max_risk == CapabilityRisk.SENSITIVE
    wider = parent.narrow(allowed={"tool*"})
    # "tool*" would cover "toolbox"; the parent only has "tool.*", so that stays out
    assert not wider.allows("toolbox") and wider.allows("tool.x")


def test_strict_narrow_refuses_widening():
    parent = PermissionSet(allowed={"a"}, max_risk=1)
    with pytest.raises(PolicyError) as info:
        parent.narrow(allowed={"a", "b"}, strict=True)
    assert info.value.code == "LA-PERMISSION-WIDEN"
    with pytest.raises(PolicyError):
        parent.narrow(max_risk=3, strict=True)


def test_bad_permission_input_is_typed():
    with pytest.raises(ConfigurationError):
        PermissionSet(allowed=[1])
    with pytest.raises(ConfigurationError):
        PermissionSet(effects={"teleport"})
    with pytest.raises(ConfigurationError):
        PermissionSet(max_risk="L9")
    with pytest.raises(ConfigurationError):
        SecurityContext(deadline="not a date")


def test_context_child_never_widens_and_keeps_identity():
    parent = SecurityContext(
        tenant_id="t",
        project_id="p",
        run_id="r",
        agent_id="boss",
        resources={"repo/a/*"},
        network_allowed=False,
        sandbox_required=True,
        deadline=datetime.now(timezone.utc) + timedelta(minutes=5),
    )
    child = parent.child(
        agent_id="worker",
        resources={"repo/a/x", "repo/b"},
        network_allowed=True,
        sandbox_required=False,
        deadline=datetime.now(timezone.utc) + timedelta(hours=1),
    )
    assert child.parent_agent_id == "boss" and child.agent_id == "worker"
    assert child.resources == frozenset({"repo/a/x"})
    assert not child.network_allowed and child.sandbox_required
    assert child.deadline == parent.deadline
    assert child.is_within(parent)
    with pytest.raises(PolicyError):
        parent.narrow(tenant_id="other")
    with pytest.raises(PolicyError):
        parent.narrow(network_allowed=True, strict=True)
    assert parent.narrow(session_id="s1").session_id == "s1"
    roundtrip = SecurityContext.from_dict(child.to_dict())
    assert roundtrip == child


def _gate_fixture():
    # The gate alone (no policy engine): its own checks, tokens and audit. With
    # lightagent-review's PolicyEngine: lightagent-review/tests/test_review_gate_policy.py.
    audit = []
    gate = CapabilityGate(
        audit=lambda type, data: audit.append((type, data)),
        ledger=InMemoryTokenLedger(),
        key=KEY,
    )
    return gate, audit


CTX = SecurityContext(
    tenant_id="t",
    project_id="p",
    run_id="r1",
    permissions=PermissionSet(allowed={"fs.*"}, max_risk=3),
    resources={"ws/*"},
)


def test_gate_order_and_typed_denials():
    gate, audit = _gate_fixture()
    read = CapabilitySpec("fs.read", read=True)
    assert gate.authorize_sync(read, "fs", {"p": 1}, CTX, resource="ws/a").allowed
    with pytest.raises(PolicyError) as info:
        gate.authorize_sync(read, "fs", {}, CTX, resource="etc/passwd")
    assert info.value.details["check"] == "resource"
    net = CapabilitySpec("fs.fetch", network=True)
    with pytest.raises(PolicyError) as info:
        gate.authorize_sync(net, "fs", {}, CTX, resource="ws/a")
    assert info.value.details["check"] == "network"
    with pytest.raises(PolicyError) as info:
        gate.authorize_sync(
            CapabilitySpec("shell.run", execute=True), "sh", {}, CTX, resource="ws/a"
        )
    assert info.value.details["check"] == "permissions"
    late = SecurityContext(
        **{**CTX.to_dict(), "deadline": datetime.now(timezone.utc) - timedelta(seconds=1)}
    )
    with pytest.raises(PolicyError) as info:
        gate.authorize_sync(read, "fs", {}, late, resource="ws/a")
    assert info.value.details["check"] == "deadline"
    decisions = [d["decision"] for t, d in audit if t == "capability.gate"]
    assert decisions == ["allow", "deny", "deny", "deny", "deny"]
    assert all("p" not in d or d.get("p") is None for _, d in audit)


def test_gate_approval_token_single_use_and_bound():
    gate, _ = _gate_fixture()
    spec = CapabilitySpec("fs.delete", write=True, risk="L3", requires_approval=True)
    args = {"path": "ws/a"}
    with pytest.raises(ApprovalError) as info:
        gate.authorize_sync(spec, "fs", args, CTX, resource="ws/a")
    assert info.value.code == "LA-APPROVAL"
    token = ApprovalToken.issue("fs.delete", args, CTX, key=KEY, resource="ws/a")
    other_args = ApprovalToken.issue("fs.delete", {"path": "ws/b"}, CTX, key=KEY, resource="ws/a")
    with pytest.raises(ApprovalError) as info:
        gate.authorize_sync(spec, "fs", args, CTX, approval_token=other_args, resource="ws/a")
    assert info.value.code == "LA-APPROVAL-MISMATCH"
    other_run = SecurityContext(**{**CTX.to_dict(), "run_id": "r2"})
    with pytest.raises(ApprovalError):
        gate.authorize_sync(spec, "fs", args, other_run, approval_token=token, resource="ws/a")
    assert gate.authorize_sync(spec, "fs", args, CTX, approval_token=token, resource="ws/a").allowed
    with pytest.raises(ApprovalError) as info:
        gate.authorize_sync(spec, "fs", args, CTX, approval_token=token, resource="ws/a")
    assert info.value.code == "LA-APPROVAL-REPLAY"


def test_token_signature_expiry_and_key():
    token = ApprovalToken.issue("op", {"a": 1}, CTX, key=KEY, ttl_seconds=10, now=1000.0)
    token.check("op", {"a": 1}, CTX, key=KEY, now=1005.0)
    with pytest.raises(ApprovalError) as info:
        token.check("op", {"a": 1}, CTX, key=KEY, now=1011.0)
    assert info.value.code == "LA-APPROVAL-EXPIRED"
    with pytest.raises(ApprovalError) as info:
        token.check("op", {"a": 1}, CTX, key="x" * 32, now=1005.0)
    assert info.value.code == "LA-APPROVAL-MISMATCH"
    forged = ApprovalToken.from_dict({**token.to_dict(), "expires_at": 10**12})
    with pytest.raises(ApprovalError):
        forged.check("op", {"a": 1}, CTX, key=KEY, now=1005.0)
    assert ApprovalToken.decode(token.encode()) == token
    with pytest.raises(ApprovalError):
        ApprovalToken.decode("!!garbage")


def test_no_key_is_a_typed_error(monkeypatch):
    monkeypatch.delenv("LIGHTAGENT_APPROVAL_KEY", raising=False)
    with pytest.raises(ConfigurationError) as info:
        ApprovalToken.issue("op", {}, CTX)
    assert info.value.code == "LA-APPROVAL-KEY"
    with pytest.raises(ConfigurationError):
        ApprovalToken.issue("op", {}, CTX, key="short")
    monkeypatch.setenv("LIGHTAGENT_APPROVAL_KEY", KEY)
    assert ApprovalToken.issue("op", {}, CTX).signature


def test_intersect_keeps_only_what_both_contexts_hold():
    soon = datetime.now(timezone.utc) + timedelta(minutes=5)
    mine = SecurityContext(
        user_id="ann",
        permissions=PermissionSet(allowed={"fs.*", "web.search"}, denied={"fs.delete"}),
        resources={"repo/*"},
        network_allowed=True,
    )
    theirs = SecurityContext(
        user_id="bob",  # identity is not theirs to change
        permissions=PermissionSet(allowed={"fs.read", "web.*"}, max_risk="L1"),
        resources={"repo/docs/*", "other/*"},
        sandbox_required=True,
        deadline=soon,
    )
    both = mine.intersect(theirs)
    assert both.is_within(mine) and both.is_within(theirs)
    assert both.user_id == "ann"
    assert both.permissions.allows("fs.read", "L1") and both.permissions.allows("web.search")
    assert not both.permissions.allows("fs.write") and not both.permissions.allows("web.fetch")
    assert not both.permissions.allows("fs.read", "L2")
    assert both.resources == frozenset({"repo/docs/*"})
    assert (both.network_allowed, both.sandbox_required, both.deadline) == (False, True, soon)
