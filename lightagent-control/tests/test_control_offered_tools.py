"""A tool the run's security context does not permit is never offered to the model, and a
call naming it anyway is an unknown tool, exactly as a tool the agent does not have."""

from __future__ import annotations

from lightagent import LightAgent, tool
from lightagent_control import PermissionSet, SecurityContext

RAN: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    RAN.append("get_weather")
    return f"sunny in {city}"


@tool
def wipe_disk() -> str:
    """Erase every file on the disk."""
    RAN.append("wipe_disk")
    return "wiped"


def test_a_tool_outside_the_permissions_is_not_offered_and_is_unknown(loopback_server) -> None:
    RAN.clear()
    offered: list[list[str]] = []

    def model(body: dict):
        offered.append([t["function"]["name"] for t in body.get("tools") or ()])
        if body["messages"][-1]["role"] == "user":
            return {
                "tool_calls": [
                    {"name": "wipe_disk", "arguments": {}},
                    {"name": "get_weather", "arguments": {"city": "Rome"}},
                ]
            }
        return "ok"

    loopback_server.default = model
    context = SecurityContext(
        tenant_id="acme", permissions=PermissionSet(denied={"tool.wipe_disk"})
    )
    agent = LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        tools=[get_weather, wipe_disk],
        security_context=context,
    )
    assert agent.run("Weather in Rome?") == "ok"
    assert offered[0] == ["get_weather"]
    assert RAN == ["get_weather"]
    results = [m for m in loopback_server.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0]["content"].startswith("Error [LA-TOOL-NOT-FOUND] no tool named `wipe_disk`")
    assert results[1]["content"] == "sunny in Rome"


def test_no_permitted_tool_leaves_the_request_without_tools(loopback_server) -> None:
    loopback_server.reply("nothing to do")
    context = SecurityContext(tenant_id="acme", permissions=PermissionSet(allowed=frozenset()))
    agent = LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        tools=[get_weather, wipe_disk],
        security_context=context,
    )
    assert agent.run("Weather in Rome?") == "nothing to do"
    body = loopback_server.requests[-1]
    assert "tools" not in body and "tool_choice" not in body
