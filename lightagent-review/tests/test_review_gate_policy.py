"""CapabilityGate with lightagent-review's PolicyEngine and SqlTokenLedger: order, tokens,
rewrites, fail-closed policies, single use across processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest
from lightagent.errors import ApprovalError, ConfigurationError, PolicyError
from lightagent.policy import PolicyDecision
from lightagent_control.capabilities import CapabilitySpec
from lightagent_control.security import (
    ApprovalToken,
    CapabilityGate,
    InMemoryTokenLedger,
    PermissionSet,
    SecurityContext,
)
from lightagent_review import PolicyEngine, SqlTokenLedger

KEY = "k" * 32


def _gate_fixture(policies=()):
    audit = []
    gate = CapabilityGate(
        policy_engine=PolicyEngine(policies),
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


def test_policy_after_token_and_rewrite_async():
    def cap_size(request):
        if request.arguments.get("size", 0) > 10:
            return PolicyDecision.rewrite({**request.arguments, "size": 10})
        return None

    async def read_only(request):
        if request.capability.write and request.context.metadata.get("read_only"):
            return PolicyDecision.block("workspace is read-only")
        return None

    gate, _ = _gate_fixture([cap_size, read_only])
    spec = CapabilitySpec("fs.write", write=True, risk=1)
    decision = asyncio.run(gate.authorize(spec, "fs", {"size": 50}, CTX, resource="ws/x"))
    assert decision.arguments == {"size": 10}
    ro = SecurityContext(**{**CTX.to_dict(), "metadata": {"read_only": True}})
    with pytest.raises(PolicyError) as info:
        asyncio.run(gate.authorize(spec, "fs", {}, ro, resource="ws/x"))
    assert "read-only" in info.value.message


def test_policy_engine_fails_closed():
    def broken(request):
        raise RuntimeError("boom")

    spec = CapabilitySpec("x")
    from lightagent.policy import PolicyRequest

    assert not PolicyEngine([broken]).evaluate_sync(PolicyRequest(spec)).allowed
    assert PolicyEngine([broken], fail_closed=False).evaluate_sync(PolicyRequest(spec)).allowed
    decision = PolicyEngine([lambda r: PolicyDecision.approval("human please")]).evaluate_sync(
        PolicyRequest(spec)
    )
    assert decision.requires_approval and decision.action == "require_approval"
    with pytest.raises(ConfigurationError):
        PolicyEngine([42])


def test_sql_ledger_blocks_double_use_across_processes(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    token = ApprovalToken.issue("fs.delete", {"p": 1}, CTX, key=KEY)
    script = textwrap.dedent(
        f"""
        import sys
        from lightagent_control.security import ApprovalToken
        from lightagent_review import SqlTokenLedger
        token = ApprovalToken.decode(sys.argv[1])
        try:
            token.consume(SqlTokenLedger({url!r}))
        except Exception as exc:
            print(getattr(exc, "code", type(exc).__name__))
        else:
            print("ok")
        """
    )
    outs = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", script, token.encode()],
            capture_output=True,
            text=True,
            timeout=60,
        )
        outs.append(proc.stdout.strip() or proc.stderr)
    assert outs == ["ok", "LA-APPROVAL-REPLAY"]
    assert SqlTokenLedger(url).is_used(token.token_id)


@pytest.mark.postgres
def test_sql_ledger_on_postgres(postgres_url):
    ledger = SqlTokenLedger(postgres_url)
    token = ApprovalToken.issue("op", {}, CTX, key=KEY)
    token.consume(ledger)
    with pytest.raises(ApprovalError) as info:
        token.consume(SqlTokenLedger(postgres_url))
    assert info.value.code == "LA-APPROVAL-REPLAY"
    ledger.close()


def test_async_gate_with_a_durable_ledger(tmp_path):
    ledger = SqlTokenLedger(f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    gate = CapabilityGate(ledger=ledger, key=KEY)
    spec = CapabilitySpec("fs.delete", write=True, risk=3, requires_approval=True)
    token = ApprovalToken.issue("fs.delete", {"p": 1}, CTX, key=KEY, resource="ws/a")

    async def twice():
        await gate.authorize(spec, "fs", {"p": 1}, CTX, approval_token=token, resource="ws/a")
        await gate.authorize(spec, "fs", {"p": 1}, CTX, approval_token=token, resource="ws/a")

    with pytest.raises(ApprovalError) as info:
        asyncio.run(twice())
    assert info.value.code == "LA-APPROVAL-REPLAY" and ledger.is_used(token.token_id)
