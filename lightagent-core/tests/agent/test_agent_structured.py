"""Structured output: response_format json_schema where supported, a forced tool elsewhere."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pydantic
import pytest
from lightagent import ConfigurationError, LightAgent, ScriptedModel


class City(pydantic.BaseModel):
    """A city and its population."""

    name: str
    population: int


class NativeModel(ScriptedModel):
    """A scripted model whose profile supports JSON-schema response formats."""

    profile = SimpleNamespace(supports_json_schema=True)


def test_json_schema_mode_validates_and_parses() -> None:
    model = NativeModel(['{"name": "Oslo", "population": 700000}'])
    result = LightAgent(model=model).run("Oslo?", output_schema=City, result_format="object")
    assert result.parsed == City(name="Oslo", population=700000)
    assert json.loads(result.content) == {"name": "Oslo", "population": 700000}
    request = model.requests[0]
    assert request.response_format["type"] == "json_schema"
    assert request.response_format["json_schema"]["schema"]["required"] == ["name", "population"]
    assert request.tools is None


def test_one_repair_retry_with_the_validation_error() -> None:
    model = NativeModel(
        [
            '{"name": "Oslo", "population": "many"}',
            '```json\n{"name": "Oslo", "population": 1}\n```',
        ]
    )
    result = LightAgent(model=model).run("Oslo?", output_schema=City, result_format="object")
    assert result.parsed.population == 1
    repair = model.requests[1].messages[-1]
    assert repair["role"] == "user" and "population" in repair["content"]


def test_second_failure_is_a_validation_error() -> None:
    model = NativeModel(["not json", "still not json"])
    result = LightAgent(model=model).run("Oslo?", output_schema=City, result_format="object")
    assert result.error["code"] == "LA-VALIDATION"
    assert result.parsed is None
    assert len(model.requests) == 2


def test_forced_tool_call_where_json_schema_is_unsupported() -> None:
    model = ScriptedModel(
        [{"tool_calls": [{"name": "City", "arguments": {"name": "Rome", "population": 2800000}}]}]
    )
    result = LightAgent(model=model).run("Rome?", output_schema=City, result_format="object")
    assert result.parsed == City(name="Rome", population=2800000)
    request = model.requests[0]
    assert request.response_format is None
    assert request.tool_choice == {"type": "function", "function": {"name": "City"}}
    assert request.tools[0]["function"]["parameters"]["properties"].keys() == {"name", "population"}
    # the transcript stays valid for the next turn: the call has a result
    assert result.messages[-1]["role"] == "tool"


def test_forced_tool_repair_and_other_tools() -> None:
    def lookup(city: str) -> str:
        return "2.8M"

    lookup.tool_info = {
        "tool_name": "lookup",
        "tool_description": "Population of a city.",
        "tool_params": [
            {"name": "city", "type": "string", "description": "city", "required": True}
        ],
    }
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "lookup", "arguments": {"city": "Rome"}}]},
            {"tool_calls": [{"name": "City", "arguments": {"name": "Rome"}}]},
            {
                "tool_calls": [
                    {"name": "City", "arguments": {"name": "Rome", "population": 2800000}}
                ]
            },
        ]
    )
    agent = LightAgent(model=model, tools=[lookup])
    result = agent.run("Rome?", output_schema=City, result_format="object")
    assert result.parsed.population == 2800000
    assert model.requests[0].tool_choice == "required"
    assert "population" in model.requests[2].messages[-1]["content"]


def test_streamed_structured_output() -> None:
    model = NativeModel(['{"name": "Oslo", "population": 7}'])
    events = list(
        LightAgent(model=model).run("Oslo?", stream=True, result_format="event", output_schema=City)
    )
    assert events[-1].type == "done"
    assert events[-1].data["parsed"] == {"name": "Oslo", "population": 7}


def test_output_schema_must_be_a_pydantic_model() -> None:
    with pytest.raises(ConfigurationError):
        LightAgent(model=ScriptedModel()).run("q", output_schema=dict)


def test_other_calls_next_to_the_answer_tool_keep_the_transcript_valid() -> None:
    def lookup(city: str) -> str:
        raise AssertionError("not run once the answer is given")

    lookup.tool_info = {
        "tool_name": "lookup",
        "tool_description": "Population of a city.",
        "tool_params": [
            {"name": "city", "type": "string", "description": "city", "required": True}
        ],
    }
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "lookup", "arguments": {"city": "Rome"}},
                    {"name": "City", "arguments": {"name": "Rome", "population": 1}},
                ]
            }
        ]
    )
    result = LightAgent(model=model, tools=[lookup]).run(
        "Rome?", output_schema=City, result_format="object"
    )
    assert result.parsed.population == 1
    call_ids = [c["id"] for c in result.messages[-3]["tool_calls"]]
    assert [m["tool_call_id"] for m in result.messages[-2:]] == call_ids
