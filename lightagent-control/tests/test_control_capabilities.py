"""CapabilityRegistry lifecycle and scopes, and the security context on the agent's tool path
(policies and approval there: lightagent-review/tests/test_review_capability_policy.py)."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import (
    BaseCapabilityProvider,
    CapabilityRegistry,
    CapabilitySpec,
    LightAgent,
    PermissionSet,
    ScriptedModel,
    SecurityContext,
    tool,
)
from lightagent.errors import ConfigurationError, PluginError
from lightagent_control.capabilities import CapabilityRisk, ProviderHealth


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


def test_spec_validation_and_effects():
    spec = CapabilitySpec("fs.write", write=True, persistent=True, risk="L1")
    assert spec.effects == {"write", "persistence"} and spec.risk is CapabilityRisk.ISOLATED_WRITE
    assert spec.to_dict()["risk"] == "L1"
    for bad in (
        {"name": ""},
        {"name": "x", "risk": 7},
        {"name": "x", "timeout": -1},
        {"name": "x", "output_limit": 0},
    ):
        with pytest.raises(ConfigurationError):
            CapabilitySpec(**bad)


def test_lifecycle_scopes_precedence_conflicts_and_no_leaks():
    async def scenario():
        registry = CapabilityRegistry()
        base = Recorder(
            "base", [CapabilitySpec("search")], handlers={"search": lambda q: f"base:{q}"}
        )
        other = Recorder(
            "other", [CapabilitySpec("search")], handlers={"search": lambda q: f"other:{q}"}
        )
        mine = Recorder(
            "mine", [CapabilitySpec("search")], handlers={"search": lambda q: f"mine:{q}"}
        )
        await registry.mount(base)
        await registry.mount(other)
        await registry.mount(mine, scope="agent", owner_id="agent-1")
        assert base.calls == ["mount", "start"]
        assert [c["providers"] for c in registry.conflicts()] == [["base", "other"]]
        assert registry.resolve("search")[0] is other  # later wins at equal scope
        agent_ctx = SecurityContext(agent_id="agent-1")
        assert registry.resolve("search", agent_ctx)[0] is mine  # agent > runtime
        assert registry.resolve("search", SecurityContext(agent_id="agent-2"))[0] is other
        assert await registry.invoke("search", {"q": "x"}, context=agent_ctx) == "mine:x"
        health = await registry.health()
        assert all(isinstance(h, ProviderHealth) and h.healthy for h in health.values())
        await registry.reload("base", {"k": 1})
        assert ("reload", {"k": 1}) in base.calls
        assert await registry.unmount("other") == 1
        assert other.calls[-2:] == ["stop", "unmount"]
        assert registry.conflicts() == []
        assert await registry.release_owner("agent-1") == 1
        assert registry.resolve("search", agent_ctx)[0] is base
        await registry.aclose()
        assert (
            registry.registrations() == [] and registry.list() == {} and registry.conflicts() == []
        )
        assert base.calls[-2:] == ["stop", "unmount"]

    asyncio.run(scenario())


def test_failed_mount_leaves_nothing_registered():
    class Broken(Recorder):
        async def start(self):
            raise RuntimeError("no")

    async def scenario():
        registry = CapabilityRegistry()
        with pytest.raises(RuntimeError):
            await registry.mount(Broken("b", [CapabilitySpec("x")]))
        assert registry.registrations() == []

    asyncio.run(scenario())


def test_registry_input_errors_are_typed():
    registry = CapabilityRegistry()
    with pytest.raises(ConfigurationError):
        registry.register(Recorder("p", [CapabilitySpec("x")]), scope="galaxy")
    with pytest.raises(ConfigurationError):
        registry.register(Recorder("p", [CapabilitySpec("x")]), scope="session")
    with pytest.raises(ConfigurationError):
        registry.register(object())
    with pytest.raises(PluginError):
        asyncio.run(registry.invoke("missing"))


# -- the security context on the agent's tool path -------------------------------------------------------

RAN: list[str] = []


@tool
def rm(path: str) -> str:
    """Remove a path."""
    RAN.append(path)
    return "removed"


def test_agent_security_context_gates_tools_and_audits():
    RAN.clear()
    ctx = SecurityContext(tenant_id="t", permissions=PermissionSet(allowed={"tool.lookup"}))
    model = ScriptedModel([{"tool_calls": [{"name": "rm", "arguments": {"path": "/a"}}]}, "ok"])
    agent = LightAgent(model=model, tools=[rm])
    from lightagent_control.interceptor import build_interceptor

    agent.interceptor = build_interceptor(security_context=ctx)
    result = agent.run("q", result_format="object", trace=True)
    assert RAN == []
    # not permitted: never offered to the model, the withholding audited once, no arguments
    assert not model.requests[0].tools
    gate = [e["data"] for e in result.trace if e["type"] == "capability.gate"]
    assert [g["decision"] for g in gate] == ["withhold"] and gate[0]["check"] == "permissions"
    assert gate[0]["capability"] == "tool.rm" and "/a" not in str(gate[0])
