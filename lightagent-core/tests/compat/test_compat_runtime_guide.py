"""The seeds' runtime guide (v0.10/0.11) code blocks, imports changed, model on the loopback server."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import (
    BaseCapabilityProvider,
    CapabilityRegistry,
    CapabilitySpec,
    LightAgent,
    PolicyDecision,
    PolicyEngine,
    PolicyError,
)


def test_async_usage(loopback_server) -> None:
    loopback_server.reply("incident analysed", "streamed analysis")
    agent = LightAgent(model="deepseek-v4-flash", api_key="k", base_url=loopback_server.base_url)

    async def main() -> tuple[object, str]:
        result = await agent.arun("Analyze the incident")
        stream = await agent.arun("Analyze the incident", stream=True)
        text = ""
        async for chunk in stream:
            text += chunk.choices[0].delta.content or ""
        return result, text

    result, text = asyncio.run(main())
    assert result == "incident analysed" and text == "streamed analysis"


def test_capabilities_and_policy() -> None:
    def workspace_policy(request):
        if request.capability.write and request.context.metadata.get("read_only"):
            return PolicyDecision.block("workspace is read-only")
        return PolicyDecision.allow(request.arguments)

    registry = CapabilityRegistry(policy_engine=PolicyEngine([workspace_policy]))
    written: list[str] = []
    registry.register(
        BaseCapabilityProvider(
            [CapabilitySpec("fs.write", write=True)],
            handlers={"fs.write": lambda text: written.append(text) or "ok"},
        )
    )

    class Ctx:
        def __init__(self, read_only: bool) -> None:
            self.metadata = {"read_only": read_only}

    assert asyncio.run(registry.invoke("fs.write", {"text": "a"}, context=Ctx(False))) == "ok"
    with pytest.raises(PolicyError):
        asyncio.run(registry.invoke("fs.write", {"text": "b"}, context=Ctx(True)))
    assert written == ["a"]
