"""CapabilityRegistry.invoke answers requires_approval through a human: a reviewer, a
parked request resumed by approval_id, a policy asking for approval, the sync gate. Each
for providers written with sync and with async code (tokens, refusals, timeout and
output_limit: lightagent-core's tests/control/test_control_capability_spec.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from lightagent import (
    BaseCapabilityProvider,
    CapabilityRegistry,
    CapabilitySpec,
    PolicyDecision,
    SecurityContext,
)
from lightagent.errors import ApprovalError
from lightagent_review import (
    ApprovalDecision,
    HumanApprovalHook,
    InMemoryReviewStore,
    PolicyEngine,
    SqlReviewStore,
)

KEY = "k" * 32


class Calls:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict]] = []


def handler_provider(kind: str, specs: list[CapabilitySpec], calls: Calls, result=None):
    """A BaseCapabilityProvider whose handlers are sync or async functions."""

    def sync_handler(name):
        def run(**kw):
            calls.seen.append((name, kw))
            return result if result is not None else f"{name} done"

        return run

    def async_handler(name):
        async def run(**kw):
            calls.seen.append((name, kw))
            return result if result is not None else f"{name} done"

        return run

    make = sync_handler if kind == "sync" else async_handler
    return BaseCapabilityProvider(
        specs, name=f"p-{kind}", handlers={s.name: make(s.name) for s in specs}
    )


class SyncInvokeProvider:
    """A provider class with a plain (blocking) ``invoke``."""

    name = "sync-invoke"
    version = "1"

    def __init__(self, specs, calls: Calls, result=None, sleep: float = 0.0):
        self.capabilities = {s.name: s for s in specs}
        self.calls = calls
        self.result = result
        self.sleep = sleep

    def invoke(self, capability, **kw):
        self.calls.seen.append((capability, kw))
        if self.sleep:
            time.sleep(self.sleep)
        return self.result if self.result is not None else f"{capability} done"


class AsyncInvokeProvider(SyncInvokeProvider):
    name = "async-invoke"

    async def invoke(self, capability, **kw):
        self.calls.seen.append((capability, kw))
        if self.sleep:
            await asyncio.sleep(self.sleep)
        return self.result if self.result is not None else f"{capability} done"


PROVIDERS = ["sync-handler", "async-handler", "sync-invoke", "async-invoke"]


def make_provider(kind: str, specs, calls: Calls, result=None, sleep: float = 0.0):
    if kind == "sync-handler":
        return handler_provider("sync", specs, calls, result)
    if kind == "async-handler":
        return handler_provider("async", specs, calls, result)
    if kind == "sync-invoke":
        return SyncInvokeProvider(specs, calls, result, sleep)
    return AsyncInvokeProvider(specs, calls, result, sleep)


def registry_with(provider, **kw) -> CapabilityRegistry:
    registry = CapabilityRegistry(**kw)
    registry.register(provider)
    return registry


RM = CapabilitySpec("fs.rm", write=True, risk="L3", requires_approval=True)


# -- requires_approval ---------------------------------------------------------------------


# -- requires_approval through a human ---------------------------------------------------


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize("reviewer_kind", ["sync", "async"])
def test_a_human_reviewer_approves_rejects_or_edits(kind, reviewer_kind):
    answers = iter([True, "too risky", {"action": "edit", "arguments": {"path": "safe"}}])
    seen = []

    def sync_reviewer(request):
        seen.append(request)
        return next(answers)

    async def async_reviewer(request):
        seen.append(request)
        return next(answers)

    reviewer = sync_reviewer if reviewer_kind == "sync" else async_reviewer
    calls = Calls()
    audit: list = []
    registry = registry_with(
        make_provider(kind, [RM], calls),
        approval=reviewer,
        audit=lambda kind, data: audit.append((kind, data)),
    )
    ctx = SecurityContext(tenant_id="t", user_id="ann")

    async def scenario():
        assert await registry.invoke("fs.rm", {"path": "a"}, context=ctx) == "fs.rm done"
        with pytest.raises(ApprovalError) as info:
            await registry.invoke("fs.rm", {"path": "b"}, context=ctx)
        assert info.value.code == "LA-APPROVAL" and "too risky" in info.value.message
        await registry.invoke("fs.rm", {"path": "c"}, context=ctx)

    asyncio.run(scenario())
    assert calls.seen == [("fs.rm", {"path": "a"}), ("fs.rm", {"path": "safe"})]
    assert [r.action for r in seen] == ["capability_invoke"] * 3
    assert seen[0].user_id == "ann" and seen[0].action_name == "fs.rm"
    kinds = [k for k, _ in audit]
    assert "approval_required" in kinds and "approval_approve" in kinds
    assert "approval_reject" in kinds


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
def test_a_parked_request_is_resolved_then_resumed_with_approval_id(store_kind, tmp_path):
    store = (
        InMemoryReviewStore()
        if store_kind == "memory"
        else SqlReviewStore(f"sqlite:///{tmp_path / 'reviews.db'}")
    )
    calls = Calls()
    # a bare store, or the hook built on it: both park the request in the store
    approval = store if store_kind == "memory" else HumanApprovalHook(store=store)
    registry = registry_with(make_provider("sync-invoke", [RM], calls), approval=approval)
    args = {"path": "a"}

    async def scenario():
        with pytest.raises(ApprovalError) as info:
            await registry.invoke("fs.rm", args)
        assert info.value.code == "LA-APPROVAL-PENDING"
        request_id = info.value.details["request_id"]
        assert [r.request_id for r in store.list_pending()] == [request_id]
        # still pending: refused again, nothing runs
        with pytest.raises(ApprovalError) as info:
            await registry.invoke("fs.rm", args, approval_id=request_id)
        assert info.value.code == "LA-APPROVAL-PENDING"
        store.resolve(request_id, ApprovalDecision(request_id=request_id, action="approve"))
        # the approval covers exactly these arguments
        with pytest.raises(ApprovalError) as info:
            await registry.invoke("fs.rm", {"path": "other"}, approval_id=request_id)
        assert info.value.code == "LA-APPROVAL-PENDING"  # a new request, not this one
        assert await registry.invoke("fs.rm", args, approval_id=request_id) == "fs.rm done"
        with pytest.raises(ApprovalError) as info:
            await registry.invoke("fs.rm", args, approval_id=request_id)
        assert info.value.code == "LA-APPROVAL-REPLAY"

    asyncio.run(scenario())
    assert calls.seen == [("fs.rm", args)]


def test_an_approval_a_policy_asks_for_takes_the_same_path():
    calls = Calls()
    spec = CapabilitySpec("fs.write", write=True)
    engine = PolicyEngine([lambda request: PolicyDecision.approval("big write")])
    registry = registry_with(make_provider("async-handler", [spec], calls), policy_engine=engine)
    with pytest.raises(ApprovalError) as info:
        asyncio.run(registry.invoke("fs.write", {"n": 1}))
    assert info.value.code == "LA-APPROVAL" and "big write" in info.value.message
    assert calls.seen == []
    approving = registry_with(
        make_provider("async-handler", [spec], calls),
        policy_engine=engine,
        approval=lambda request: True,
    )
    assert asyncio.run(approving.invoke("fs.write", {"n": 1})) == "fs.write done"


def test_the_sync_gate_uses_the_same_approval_path():
    from lightagent_control.security import CapabilityGate

    ctx = SecurityContext(tenant_id="t")
    refusing = CapabilityGate()
    with pytest.raises(ApprovalError):
        refusing.authorize_sync(RM, "p", {"path": "a"}, ctx)
    reviewed = []
    gate = CapabilityGate(approval=lambda request: reviewed.append(request) or True)
    assert gate.authorize_sync(RM, "p", {"path": "a"}, ctx).allowed
    rejecting = CapabilityGate(approval=lambda request: False)
    with pytest.raises(ApprovalError):
        rejecting.authorize_sync(RM, "p", {"path": "a"}, ctx)
    assert len(reviewed) == 1


def test_a_reviewer_thread_does_not_block_other_invocations():
    """An async invoke waits for its reviewer off the event loop; other calls go on."""
    release = threading.Event()

    def slow_reviewer(request):
        release.wait(10)
        return True

    calls = Calls()
    plain = CapabilitySpec("fs.read", read=True)
    registry = registry_with(
        make_provider("async-handler", [RM, plain], calls), approval=slow_reviewer
    )

    async def scenario():
        waiting = asyncio.create_task(registry.invoke("fs.rm", {"path": "a"}))
        assert await registry.invoke("fs.read", {}) == "fs.read done"
        release.set()
        assert await waiting == "fs.rm done"

    asyncio.run(scenario())
