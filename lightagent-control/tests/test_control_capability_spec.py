"""CapabilityRegistry.invoke enforces the spec: requires_approval (through the approval
path: token, human approval, or a typed refusal), timeout and output_limit. Each for
providers written with sync and with async code."""

from __future__ import annotations

import asyncio
import time

import pytest
from lightagent import (
    ApprovalToken,
    BaseCapabilityProvider,
    CapabilityRegistry,
    CapabilitySpec,
    SecurityContext,
)
from lightagent.errors import ApprovalError, ToolError

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


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize(
    "context", [None, SecurityContext(tenant_id="t")], ids=["no-context", "security-context"]
)
def test_requires_approval_without_any_approval_path_fails_closed(kind, context):
    calls = Calls()
    registry = registry_with(make_provider(kind, [RM], calls))
    with pytest.raises(ApprovalError) as info:
        asyncio.run(registry.invoke("fs.rm", {"path": "a"}, context=context))
    assert info.value.code == "LA-APPROVAL"
    assert info.value.details["capability"] == "fs.rm"
    assert "approval" in info.value.hint
    assert calls.seen == []


def test_requires_approval_with_a_context_that_is_not_a_security_context():
    class RunInfo:
        user_id = "u"
        run_id = "r"
        metadata: dict = {}

    calls = Calls()
    registry = registry_with(make_provider("async-handler", [RM], calls))
    with pytest.raises(ApprovalError):
        asyncio.run(registry.invoke("fs.rm", {"path": "a"}, context=RunInfo()))
    assert calls.seen == []


@pytest.mark.parametrize("kind", PROVIDERS)
def test_an_approval_token_answers_it_once_and_only_for_its_arguments(kind):
    calls = Calls()
    registry = registry_with(make_provider(kind, [RM], calls))
    args = {"path": "a"}
    token = ApprovalToken.issue("fs.rm", args, None, key=KEY)
    registry.gate._key = KEY

    async def scenario():
        other = ApprovalToken.issue("fs.rm", {"path": "b"}, None, key=KEY)
        with pytest.raises(ApprovalError) as info:
            await registry.invoke("fs.rm", args, approval_token=other)
        assert info.value.code == "LA-APPROVAL-MISMATCH"
        assert await registry.invoke("fs.rm", args, approval_token=token) == "fs.rm done"
        with pytest.raises(ApprovalError) as info:
            await registry.invoke("fs.rm", args, approval_token=token)
        assert info.value.code == "LA-APPROVAL-REPLAY"

    asyncio.run(scenario())
    assert calls.seen == [("fs.rm", args)]


# -- timeout -------------------------------------------------------------------------------


class LateCoroutineProvider:
    """A sync ``invoke`` that hands back a coroutine: the await must be timed too."""

    name = "late"
    version = "1"
    capabilities = {"slow": CapabilitySpec("slow", timeout=0.05)}

    def __init__(self) -> None:
        self.finished = False

    def invoke(self, capability, **kw):
        async def later():
            await asyncio.sleep(5)
            self.finished = True
            return "too late"

        return later()


@pytest.mark.parametrize("kind", PROVIDERS)
def test_timeout_bounds_sync_and_async_providers(kind):
    spec = CapabilitySpec("slow", timeout=0.05)
    calls = Calls()
    if kind.endswith("handler"):

        def blocking(**kw):
            time.sleep(1)

        async def sleeping(**kw):
            await asyncio.sleep(5)

        provider = BaseCapabilityProvider(
            [spec], handlers={"slow": blocking if kind == "sync-handler" else sleeping}
        )
    else:
        provider = make_provider(kind, [spec], calls, sleep=1 if kind == "sync-invoke" else 5)
    registry = registry_with(provider)
    with pytest.raises(ToolError) as info:
        asyncio.run(registry.invoke("slow"))
    assert info.value.code == "LA-TOOL-TIMEOUT"
    assert info.value.details == {"capability": "slow", "timeout": 0.05}


def test_timeout_covers_an_awaitable_a_sync_provider_returns():
    provider = LateCoroutineProvider()
    registry = registry_with(provider)
    with pytest.raises(ToolError) as info:
        asyncio.run(registry.invoke("slow"))
    assert info.value.code == "LA-TOOL-TIMEOUT"
    assert not provider.finished


# -- output_limit --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ("x" * 100, "x" * 10 + "\n[truncated 90 characters]"),
        (b"y" * 50, b"y" * 10 + b"\n[truncated 40 bytes]"),
        ({"rows": ["a" * 40]}, '{"rows": [\n[truncated 44 characters]'),
        (["b" * 30], '["bbbbbbbb\n[truncated 24 characters]'),
    ],
    ids=["str", "bytes", "dict", "list"],
)
def test_output_limit_cuts_every_kind_of_result(kind, result, expected):
    spec = CapabilitySpec("big", output_limit=10)
    registry = registry_with(make_provider(kind, [spec], Calls(), result=result))
    assert asyncio.run(registry.invoke("big")) == expected


@pytest.mark.parametrize("result", ["short", b"short", {"a": 1}, [1, 2]])
def test_results_within_the_limit_are_returned_unchanged(result):
    spec = CapabilitySpec("small", output_limit=10)
    registry = registry_with(make_provider("async-invoke", [spec], Calls(), result=result))
    out = asyncio.run(registry.invoke("small"))
    assert out == result and type(out) is type(result)
