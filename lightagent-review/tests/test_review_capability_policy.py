"""Policy on CapabilityRegistry.invoke and on the agent's tool path (lightagent-review's
PolicyEngine), and a capability's requires_approval answered by a review store."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import (
    BaseCapabilityProvider,
    CapabilityRegistry,
    CapabilitySpec,
    LightAgent,
    PermissionSet,
    PolicyDecision,
    ScriptedModel,
    SecurityContext,
    tool,
)
from lightagent.errors import PolicyError, ToolError
from lightagent_review import InMemoryReviewStore, PolicyEngine


class Recorder(BaseCapabilityProvider):
    def __init__(self, name, specs, **kw):
        super().__init__(specs, name=name, **kw)
        self.calls = []

    async def mount(self, context=None):
        self.calls.append("mount")

    async def start(self):
        self.calls.append("start")

    async def stop(self):
        self.calls.append("stop")

    async def unmount(self):
        self.calls.append("unmount")

    async def reload(self, config=None):
        self.calls.append(("reload", config))


def test_invoke_applies_policy_timeout_and_output_limit():
    async def slow(**kw):
        await asyncio.sleep(5)

    provider = Recorder(
        "p",
        [
            CapabilitySpec("long", output_limit=10),
            CapabilitySpec("slow", timeout=0.05),
            CapabilitySpec("write", write=True, risk=2),
        ],
        handlers={"long": lambda: "x" * 100, "slow": slow, "write": lambda: "written"},
    )

    def read_only(request):
        if request.capability.write and (request.context.metadata or {}).get("read_only"):
            return PolicyDecision.block("workspace is read-only")
        return PolicyDecision.allow(request.arguments)

    async def scenario():
        registry = CapabilityRegistry(policy_engine=PolicyEngine([read_only]))
        await registry.mount(provider)
        out = await registry.invoke("long")
        assert out.startswith("x" * 10) and "truncated 90" in out
        with pytest.raises(ToolError) as info:
            await registry.invoke("slow")
        assert info.value.code == "LA-TOOL-TIMEOUT"
        ro = SecurityContext(metadata={"read_only": True})
        with pytest.raises(PolicyError):
            await registry.invoke("write", context=ro)
        assert await registry.invoke("write", context=SecurityContext()) == "written"
        narrow = SecurityContext(permissions=PermissionSet(max_risk=1))
        with pytest.raises(PolicyError):
            await registry.invoke("write", context=narrow)

    asyncio.run(scenario())


# -- policy on the agent's tool path -------------------------------------------------------

RAN: list[str] = []


@tool
def rm(path: str) -> str:
    """Remove a path."""
    RAN.append(path)
    return "removed"


def test_agent_policy_blocks_rewrites_and_requires_approval():
    RAN.clear()

    def policy(request):
        path = request.arguments.get("path", "")
        if path.startswith("/etc"):
            return PolicyDecision.block("system paths are off limits")
        if path.startswith("~"):
            return PolicyDecision.rewrite({"path": path.replace("~", "/home/u")})
        if path.startswith("/important"):
            return PolicyDecision.approval("important data")
        return None

    calls = [
        {"name": "rm", "arguments": {"path": p}} for p in ("/etc/passwd", "~/tmp", "/important/x")
    ]
    model = ScriptedModel([{"tool_calls": calls}, "done"])
    agent = LightAgent(model=model, tools=[rm], policy_engine=PolicyEngine([policy]))
    result = agent.run("clean up", result_format="object", trace=True)
    assert result.content == "done"
    assert RAN == ["/home/u/tmp"]
    outputs = [m["content"] for m in model.requests[1].messages if m["role"] == "tool"]
    assert "system paths are off limits" in outputs[0]
    assert "LA-APPROVAL" in outputs[2]
    assert any(
        e["type"] == "hook_decision" and e["data"].get("adapter") == "policy" for e in result.trace
    )


def test_capability_registry_spec_requires_approval_for_tool():
    RAN.clear()

    async def setup():
        registry = CapabilityRegistry()
        await registry.mount(
            BaseCapabilityProvider(
                [CapabilitySpec("tool.rm", write=True, risk=3, requires_approval=True)],
                name="tools",
            )
        )
        return registry

    registry = asyncio.run(setup())
    model = ScriptedModel([{"tool_calls": [{"name": "rm", "arguments": {"path": "/a"}}]}, "ok"])
    store = InMemoryReviewStore()
    agent = LightAgent(model=model, tools=[rm], capability_registry=registry, approval=store)
    agent.run("q")
    assert RAN == [] and len(store.list_pending()) == 1
