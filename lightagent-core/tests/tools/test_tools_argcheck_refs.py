"""Argument checks follow local ``$ref``s (``#/$defs/...``, ``#/definitions/...``)."""

from __future__ import annotations

from enum import Enum

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import ToolError
from lightagent.tools.argcheck import check_arguments
from lightagent.tools.decorator import Tool
from pydantic import BaseModel


class Color(str, Enum):
    RED = "red"
    BLUE = "blue"


class Paint(BaseModel):
    color: Color
    coats: int = 1


class Node(BaseModel):
    color: Color
    children: list[Node] = []


PAINT = {
    "type": "object",
    "properties": {"job": {"$ref": "#/$defs/Paint"}},
    "required": ["job"],
    "$defs": {
        "Color": {"type": "string", "enum": ["red", "blue"]},
        "Paint": {
            "type": "object",
            "properties": {"color": {"$ref": "#/$defs/Color"}, "coats": {"type": "integer"}},
            "required": ["color"],
        },
    },
}


def _dict_tool(schema: dict) -> Tool:
    def run(**kwargs: object) -> str:
        return "ran"

    return Tool(name="paint", description="Paint.", parameters=schema, func=run)


def test_a_bad_enum_inside_defs_is_refused_naming_its_path():
    with pytest.raises(ToolError) as info:
        _dict_tool(PAINT).prepare_arguments({"job": {"color": "green"}})
    assert info.value.code == "LA-TOOL-ARGS"
    assert info.value.details["errors"] == ['`job.color`: "green" is not one of: "red", "blue"']


def test_referenced_schemas_still_coerce():
    kwargs, _ = _dict_tool(PAINT).prepare_arguments({"job": '{"color": "red", "coats": "2"}'})
    assert kwargs == {"job": {"color": "red", "coats": 2}}


def test_definitions_and_json_pointer_escapes_resolve():
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/a~1b"}, "b": {"$ref": "#/properties/a"}},
        "definitions": {"a/b": {"type": "integer", "maximum": 3}},
    }
    _, errors = check_arguments(schema, {"a": 5, "b": 9})
    assert errors == ["`a`: must be <= 3", "`b`: must be <= 3"]


def test_a_recursive_schema_is_checked_at_every_depth():
    schema = Node.model_json_schema()
    tree = {"color": "red", "children": [{"color": "blue", "children": [{"color": "pink"}]}]}
    _, errors = check_arguments(
        {
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": schema["$defs"],
        }
        if "$defs" in schema
        else {"type": "object", "properties": {"tree": schema}},
        {"tree": tree},
    )
    assert len(errors) == 1 and errors[0].startswith("`tree.children[0].children[0].color`")


@pytest.mark.parametrize(
    "defs",
    [
        {"A": {"$ref": "#/$defs/A"}},
        {"A": {"$ref": "#/$defs/B"}, "B": {"anyOf": [{"$ref": "#/$defs/A"}]}},
    ],
)
def test_a_reference_cycle_is_refused_not_a_recursion_error(defs):
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}}, "$defs": defs}
    _, errors = check_arguments(schema, {"x": 1})
    assert errors and "`x`" in errors[0]


@pytest.mark.parametrize(
    "ref", ["#/$defs/Missing", "https://example.com/schema.json", "#/properties/x/no"]
)
def test_a_reference_that_cannot_be_followed_is_refused(ref):
    schema = {"type": "object", "properties": {"x": {"$ref": ref}}, "$defs": {}}
    _, errors = check_arguments(schema, {"x": 1})
    assert errors == [f"`x`: cannot check the schema reference {ref!r}"]


def test_all_of_with_a_reference_is_checked():
    schema = {
        "type": "object",
        "properties": {"c": {"allOf": [{"$ref": "#/$defs/Color"}], "description": "colour"}},
        "$defs": {"Color": {"enum": ["red"]}},
    }
    assert check_arguments(schema, {"c": "red"}) == ({"c": "red"}, [])
    assert check_arguments(schema, {"c": "blue"})[1] == ['`c`: "blue" is not one of: "red"']


def test_a_local_tool_with_a_pydantic_enum_field_refuses_a_bad_value_before_the_call():
    calls: list[Paint] = []

    @tool
    def paint(job: Paint) -> str:
        """Paint."""
        calls.append(job)
        return job.color.value

    call = {"name": "paint", "arguments": {"job": {"color": "green"}}}
    model = ScriptedModel([{"tool_calls": [call]}, "done"])
    result = LightAgent(model=model, tools=[paint]).run(
        "paint it", result_format="object", trace=True
    )
    errors = [e["data"]["error"] for e in result.trace if e["type"] == "tool_result"]
    assert calls == [] and errors[0]["code"] == "LA-TOOL-ARGS"
    assert "job.color" in errors[0]["message"]


def test_a_null_for_an_optional_referenced_parameter_is_left_out():
    schema = {**PAINT, "required": []}
    assert check_arguments(schema, {"job": None}) == ({}, [])
