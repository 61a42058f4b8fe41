"""User ask 23 (shared/research/user-asks.md): structured output on non-OpenAI providers and
with streaming, through the agent, the openai SDK and the loopback server.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from lightagent import LightAgent, OpenAIModel
from lightagent_contracts.loopback import LoopbackServer


class City(pydantic.BaseModel):
    """A city and its population."""

    name: str
    population: int


OSLO = {"name": "Oslo", "population": 709000}


def agent_for(srv: LoopbackServer, profile: str) -> LightAgent:
    model = OpenAIModel("m", base_url=srv.base_url, api_key="k", profile=profile, max_retry=0)
    return LightAgent(model=model)


@pytest.mark.parametrize(
    ("profile", "native"),
    [("openai", True), ("vllm", True), ("deepseek", False), ("qwen", False), ("generic", False)],
)
def test_the_request_shape_follows_the_profile(
    loopback_server: LoopbackServer, profile: str, native: bool
) -> None:
    if native:
        loopback_server.reply(json.dumps(OSLO))
    else:
        loopback_server.reply({"tool_calls": [{"name": "City", "arguments": OSLO}]})
    result = agent_for(loopback_server, profile).run(
        "Oslo?", output_schema=City, result_format="object"
    )
    assert result.error is None and result.parsed == City(**OSLO)
    body = loopback_server.requests[0]
    if native:
        assert body["response_format"]["type"] == "json_schema"
        assert "tools" not in body
    else:
        assert "response_format" not in body  # DeepSeek and Qwen reject json_schema with a 400
        assert [t["function"]["name"] for t in body["tools"]] == ["City"]
        if profile == "deepseek":  # thinking mode (the V4 default) refuses a forced tool_choice
            assert "tool_choice" not in body
        else:
            assert body["tool_choice"] == {"type": "function", "function": {"name": "City"}}


@pytest.mark.parametrize("text", [json.dumps(OSLO), f"```json\n{json.dumps(OSLO)}\n```"])
def test_a_model_that_ignores_the_forced_tool_and_writes_json_is_still_read(
    loopback_server: LoopbackServer, text: str
) -> None:
    loopback_server.reply(text)
    result = agent_for(loopback_server, "deepseek").run(
        "Oslo?", output_schema=City, result_format="object"
    )
    assert result.error is None and result.parsed == City(**OSLO)
    assert len(loopback_server.requests) == 1


def test_a_server_that_silently_ignores_json_schema_gets_one_repair_round(
    loopback_server: LoopbackServer,
) -> None:
    loopback_server.reply("Oslo has about 709k people.", json.dumps(OSLO))
    result = agent_for(loopback_server, "openai").run(
        "Oslo?", output_schema=City, result_format="object"
    )
    assert result.error is None and result.parsed == City(**OSLO)
    repair = loopback_server.requests[1]["messages"][-1]
    assert repair["role"] == "user" and "City" in repair["content"]


def test_a_second_prose_answer_is_a_typed_validation_error(loopback_server: LoopbackServer) -> None:
    loopback_server.reply("prose", "more prose")
    result = agent_for(loopback_server, "openai").run(
        "Oslo?", output_schema=City, result_format="object"
    )
    assert result.error["code"] == "LA-VALIDATION" and result.parsed is None


@pytest.mark.parametrize("profile", ["openai", "deepseek"])
def test_streamed_text_then_structured_result_both_arrive(
    loopback_server: LoopbackServer, profile: str
) -> None:
    if profile == "deepseek":
        loopback_server.reply(
            {"content": "Here is the city.", "tool_calls": [{"name": "City", "arguments": OSLO}]}
        )
    else:
        loopback_server.reply(json.dumps(OSLO))
    events = list(
        agent_for(loopback_server, profile).run(
            "Oslo?", stream=True, result_format="event", output_schema=City
        )
    )
    text = "".join(e.data for e in events if e.type == "content")
    done = events[-1]
    assert done.type == "done" and done.data["error"] is None
    assert done.data["parsed"] == OSLO
    if profile == "deepseek":
        assert text == "Here is the city."
        assert not any(e.type == "tool_call" for e in events)  # the answer tool is not a tool run
    else:
        assert json.loads(text) == OSLO
    assert len(loopback_server.requests) == 1


def test_structured_answer_after_a_real_tool_round_on_a_forced_tool_profile(
    loopback_server: LoopbackServer,
) -> None:
    def population(city: str) -> int:
        """Population of a city."""
        return 709000

    population.tool_info = {
        "tool_name": "population",
        "tool_description": "Population of a city.",
        "tool_params": [{"name": "city", "type": "string", "required": True}],
    }
    loopback_server.reply(
        {"tool_calls": [{"name": "population", "arguments": {"city": "Oslo"}}]},
        {"tool_calls": [{"name": "City", "arguments": OSLO}]},
    )
    model = OpenAIModel(
        "m", base_url=loopback_server.base_url, api_key="k", profile="generic", max_retry=0
    )
    result = LightAgent(model=model, tools=[population]).run(
        "Oslo?", output_schema=City, result_format="object"
    )
    assert result.parsed == City(**OSLO)
    first = loopback_server.requests[0]
    assert first["tool_choice"] == "required"
    assert sorted(t["function"]["name"] for t in first["tools"]) == ["City", "population"]
    assert [c["name"] for c in result.tool_calls] == ["population"]


def _thinking_server(srv: LoopbackServer, answer: Any) -> None:
    """Answer like DeepSeek V4, Kimi and GLM with thinking on: a forced tool_choice is a 400."""

    def reply(body: dict[str, Any]) -> Any:
        if body.get("tool_choice") not in (None, "auto", "none"):
            return LoopbackServer.error(
                400,
                {
                    "error": {
                        "message": "Thinking mode does not support this tool_choice",
                        "type": "invalid_request_error",
                    }
                },
            )
        return answer

    srv.reply(reply)


@pytest.mark.parametrize("profile", ["deepseek", "moonshot", "zhipu"])
@pytest.mark.parametrize("other_tools", [False, True])
def test_structured_output_never_forces_tool_choice_on_thinking_providers(
    loopback_server: LoopbackServer, profile: str, other_tools: bool
) -> None:
    def population(city: str) -> int:
        """Population of a city."""
        return 709000

    population.tool_info = {
        "tool_name": "population",
        "tool_description": "Population of a city.",
        "tool_params": [{"name": "city", "type": "string", "required": True}],
    }
    _thinking_server(loopback_server, {"tool_calls": [{"name": "City", "arguments": OSLO}]})
    model = OpenAIModel(
        "m", base_url=loopback_server.base_url, api_key="k", profile=profile, max_retry=0
    )
    agent = LightAgent(model=model, tools=[population] if other_tools else None)
    result = agent.run("Oslo?", output_schema=City, result_format="object")
    assert result.error is None, result.error
    assert result.parsed == City(**OSLO)
    body = loopback_server.requests[0]
    assert "response_format" not in body and "City" in [
        t["function"]["name"] for t in body["tools"]
    ]


def test_a_prose_answer_without_forcing_gets_the_repair_round(
    loopback_server: LoopbackServer,
) -> None:
    loopback_server.reply("Oslo has about 709k people.", json.dumps(OSLO))
    result = agent_for(loopback_server, "deepseek").run(
        "Oslo?", output_schema=City, result_format="object"
    )
    assert result.error is None and result.parsed == City(**OSLO)
    assert "City" in loopback_server.requests[1]["messages"][-1]["content"]
