"""@tool schemas from type hints and docstrings, argument validation, tool_info compatibility."""

from __future__ import annotations

import enum
import typing
from typing import Literal, Optional

import pytest
from lightagent.errors import ToolError
from lightagent.tools import Tool, as_tool, tool
from lightagent.tools.docstrings import parse_docstring
from pydantic import BaseModel, Field
from typing_extensions import TypedDict


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Address(BaseModel):
    street: str = Field(description="Street and number")
    zip_code: int


class Window(TypedDict):
    start: str
    days: int


@tool
def forecast(
    city: str,
    days: int = 3,
    unit: Unit = Unit.CELSIUS,
    mode: Literal["brief", "full"] = "brief",
    note: Optional[str] = None,  # noqa: UP045 - the spelling under test
    tags: list[str] | None = None,
    address: Address | None = None,
    window: Window | None = None,
) -> dict:
    """Forecast the weather for a city.

    Uses the regional service.

    Args:
        city (str): Name of the city,
            e.g. "Paris".
        days: How many days ahead.
        unit: Temperature unit.

    Returns:
        The forecast.
    """
    return {
        "city": city,
        "days": days,
        "unit": unit,
        "mode": mode,
        "tags": tags,
        "address": address,
    }


def props(t: Tool) -> dict:
    return t.parameters["properties"]


def test_schema_shapes_from_type_hints():
    p = forecast.parameters
    assert p["type"] == "object"
    assert p["required"] == ["city"]
    assert p["additionalProperties"] is False
    assert props(forecast)["city"] == {
        "type": "string",
        "description": 'Name of the city, e.g. "Paris".',
    }
    assert props(forecast)["days"] == {
        "type": "integer",
        "default": 3,
        "description": "How many days ahead.",
    }
    assert props(forecast)["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert props(forecast)["mode"]["enum"] == ["brief", "full"]
    note_types = {o.get("type") for o in props(forecast)["note"]["anyOf"]}
    assert note_types == {"string", "null"}
    tags = props(forecast)["tags"]["anyOf"][0]
    assert tags == {"type": "array", "items": {"type": "string"}}
    address = props(forecast)["address"]["anyOf"][0]
    assert address["properties"]["street"]["description"] == "Street and number"
    assert address["required"] == ["street", "zip_code"]
    window = props(forecast)["window"]["anyOf"][0]
    assert set(window["properties"]) == {"start", "days"}
    # pydantic's titles and $defs are cleaned out of what the model sees
    assert "title" not in str(p) and "$ref" not in str(p) and "$defs" not in p


def test_description_and_openai_schema():
    assert forecast.description == "Forecast the weather for a city.\n\nUses the regional service."
    schema = forecast.openai_schema()
    assert schema == {
        "type": "function",
        "function": {
            "name": "forecast",
            "description": forecast.description,
            "parameters": forecast.parameters,
        },
    }
    assert forecast.openai_schema() is schema  # cached
    assert forecast.is_async is False and forecast.kind == "function"


def test_tool_is_still_callable():
    assert forecast("Paris")["days"] == 3


def test_validation_coerces_what_models_get_wrong():
    kwargs = forecast.validate_arguments(
        '{"city": 75001, "days": "5", "unit": "fahrenheit", "tags": "[\\"a\\", \\"b\\"]",'
        ' "address": {"street": "1 Main", "zip_code": "12345"}, "note": null, "window": {"start": "mon", "days": 2}}'
    )
    assert kwargs["city"] == "75001"
    assert kwargs["days"] == 5
    assert kwargs["unit"] is Unit.FAHRENHEIT
    assert kwargs["tags"] == ["a", "b"]
    assert isinstance(kwargs["address"], Address) and kwargs["address"].zip_code == 12345
    assert kwargs["note"] is None
    assert kwargs["window"] == {"start": "mon", "days": 2}
    # defaults stay the function's own
    assert forecast.validate_arguments({"city": "x"}) == {"city": "x"}
    # null for a non-nullable optional means "use the default"
    assert forecast.validate_arguments({"city": "x", "days": None}) == {"city": "x"}


def test_prepare_arguments_gives_json_safe_values():
    _, clean = forecast.prepare_arguments(
        {"city": "x", "unit": "celsius", "address": {"street": "s", "zip_code": 1}}
    )
    assert clean == {"city": "x", "unit": "celsius", "address": {"street": "s", "zip_code": 1}}


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "missing required parameter `city`"),
        ({"city": "x", "days": "soon"}, "`days`"),
        ({"city": "x", "mode": "verbose"}, "`mode`"),
        ({"city": "x", "bogus": 1}, "unknown parameter `bogus`"),
        ({"city": "x", "address": {"street": "s"}}, "address.zip_code"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (42, "must be a JSON object"),
    ],
)
def test_bad_arguments_raise_tool_args(arguments, fragment):
    with pytest.raises(ToolError) as info:
        forecast.validate_arguments(arguments)
    assert info.value.code == "LA-TOOL-ARGS"
    assert fragment in info.value.message


def test_empty_or_null_arguments_mean_no_arguments():
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    for raw in ("", None, "null", "{}", b"{}"):
        assert ping.validate_arguments(raw) == {}
    assert ping.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_idempotency_key_and_context_are_injected_not_exposed():
    class RunContext:  # stands in for lightagent.interceptors.RunContext
        pass

    @tool
    def pay(amount: float, idempotency_key: str, run: RunContext) -> str:
        """Pay."""
        return idempotency_key

    assert set(props(pay)) == {"amount"}
    assert pay.injected == {"idempotency_key": "idempotency_key", "run": "context"}
    with pytest.raises(ToolError) as info:
        pay.validate_arguments({"amount": 1, "idempotency_key": "forged"})
    assert info.value.code == "LA-TOOL-ARGS"


def test_decorator_options_and_async_kinds():
    @tool(name="lookup-user", description="Find a user.", title="Lookup", timeout=2.5)
    async def find(user_id: int) -> dict:
        return {}

    assert (find.name, find.description, find.title, find.timeout) == (
        "lookup-user",
        "Find a user.",
        "Lookup",
        2.5,
    )
    assert find.is_async and find.kind == "coroutine"

    @tool
    async def stream(n: int):
        """Stream."""
        yield n

    assert stream.is_async and stream.kind == "async_generator"


def test_odd_parameter_names_and_positional_only():
    @tool
    def odd(json: str, model_config: int, /, _private: str = "z") -> str:
        """Odd names."""
        return f"{json}{model_config}{_private}"

    assert set(props(odd)) == {"json", "model_config", "_private"}
    kwargs = odd.validate_arguments({"json": "a", "model_config": 2})
    args, rest = odd.bind(kwargs)
    assert odd(*args, **rest) == "a2z"


def test_kwargs_tools_accept_extra_arguments():
    @tool
    def loose(a: int, **extra: typing.Any) -> str:
        """Loose."""
        return str(extra)

    assert "additionalProperties" not in loose.parameters
    assert loose.validate_arguments({"a": 1, "b": 2}) == {"a": 1, "b": 2}


@pytest.mark.parametrize(
    "define",
    [
        lambda: tool(lambda x: x),  # "<lambda>" is not a valid tool name
        lambda: tool(name="has space")(lambda x: x),
        lambda: tool(name="x" * 65)(lambda: 1),
        lambda: tool(timeout=0)(lambda: 1),
        lambda: tool(timeout="5")(lambda: 1),
        lambda: tool(42),
    ],
)
def test_bad_definitions_raise_tool_definition(define):
    with pytest.raises(ToolError) as info:
        define()
    assert info.value.code == "LA-TOOL-DEFINITION"


def test_unresolvable_or_non_json_types_raise_tool_definition():
    class Opaque:
        pass

    def uses_opaque(x: Opaque) -> str:
        return ""

    with pytest.raises(ToolError) as info:
        tool(uses_opaque)
    assert info.value.code == "LA-TOOL-DEFINITION" and "uses_opaque" in info.value.message

    def forward(x: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(ToolError) as info:
        tool(forward)
    assert info.value.code == "LA-TOOL-DEFINITION"


# -- docstring styles ---------------------------------------------------------------------


def test_numpy_docstring():
    parsed = parse_docstring(
        """Add two numbers.

        Parameters
        ----------
        a : int
            The first
            number.
        b : int
            The second number.

        Returns
        -------
        int
        """
    )
    assert parsed.description == "Add two numbers."
    assert parsed.params == {"a": "The first number.", "b": "The second number."}


def test_rest_docstring():
    parsed = parse_docstring(
        """Multiply.

        :param x: left side
            continued
        :param int y: right side
        :returns: product
        """
    )
    assert parsed.description == "Multiply."
    assert parsed.params == {"x": "left side continued", "y": "right side"}


def test_google_docstring_and_plain():
    parsed = parse_docstring(
        "Do it.\n\nArgs:\n    a (int): first\n    b: second\n        more\n\nRaises:\n    ValueError: never"
    )
    assert parsed.params == {"a": "first", "b": "second more"}
    assert parse_docstring(None).description == ""
    assert parse_docstring("Just text.\nMore text.").description == "Just text. More text."


def test_annotated_description_wins_over_docstring():
    @tool
    def f(x: typing.Annotated[int, Field(description="from annotation")]) -> int:
        """F.

        Args:
            x: from docstring
        """
        return x

    assert props(f)["x"]["description"] == "from annotation"


# -- seeds tool_info --------------------------------------------------------------------


def get_weather(city_name: str, days: int = 1) -> str:
    """Get the current weather for `city_name`."""
    return f"Query result: {city_name} is sunny."


get_weather.tool_info = {
    "tool_name": "get_weather",
    "tool_title": "Weather",
    "tool_description": "Get current weather information for the specified city.",
    "tool_params": [
        {
            "name": "city_name",
            "description": "The name of the city to query",
            "type": "string",
            "required": True,
        },
        {"name": "days", "description": "Days", "type": "integer", "required": False},
        {
            "name": "hours",
            "description": "Hours",
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 1,
        },
    ],
}


def test_tool_info_becomes_schema_with_extra_keys_passed_through():
    t = as_tool(get_weather)
    assert t.source == "tool_info" and t.title == "Weather"
    assert t.parameters["required"] == ["city_name"]
    assert props(t)["hours"] == {
        "type": "array",
        "description": "Hours",
        "items": {"type": "integer"},
        "minItems": 1,
    }
    assert t.tool_info is get_weather.tool_info
    assert t("Paris") == "Query result: Paris is sunny."


def test_tool_info_validation_checks_required_and_json_types():
    t = as_tool(get_weather)
    assert t.validate_arguments({"city_name": 5, "days": "2", "hours": "[1, 2]"}) == {
        "city_name": "5",
        "days": 2,
        "hours": [1, 2],
    }
    cases = [
        ({}, "missing required parameter `city_name`"),
        ({"city_name": "a", "days": "two"}, "expected `integer`"),
        ({"city_name": "a", "hours": ["x"]}, "`hours[0]`: expected `integer`"),
        ({"city_name": "a", "hours": []}, "at least 1"),
        ({"city_name": "a", "other": 1}, "unknown parameter `other`"),
        ({"city_name": "a", "days": True}, "expected `integer`"),
    ]
    for arguments, fragment in cases:
        with pytest.raises(ToolError) as info:
            t.validate_arguments(arguments)
        assert info.value.code == "LA-TOOL-ARGS", arguments
        assert fragment in info.value.message, (arguments, info.value.message)


def test_as_tool_rejects_non_tools():
    def plain(x: int) -> int:
        return x

    for obj in (plain, 42, "get_weather", None):
        with pytest.raises(ToolError) as info:
            as_tool(obj)
        assert info.value.code == "LA-TOOL-DEFINITION"
    assert as_tool(plain, infer=True).name == "plain"
    assert as_tool(forecast) is forecast


@pytest.mark.parametrize(
    "info",
    [
        {"tool_description": "no name"},
        {"tool_name": "bad name!", "tool_description": "d"},
        {"tool_name": "t", "tool_params": "city"},
        {"tool_name": "t", "tool_params": [{"type": "string"}]},
        {"tool_name": "t", "tool_params": [{"name": "a", "type": "str"}]},
        {
            "tool_name": "t",
            "tool_params": [{"name": "a", "type": "string"}, {"name": "a", "type": "string"}],
        },
        {"tool_name": "t", "tool_params": [{"name": "a", "type": "string", "required": "yes"}]},
        "not a dict",
    ],
)
def test_bad_tool_info_raises_tool_definition(info):
    def f(**kwargs):
        return kwargs

    f.tool_info = info
    with pytest.raises(ToolError) as err:
        as_tool(f)
    assert err.value.code == "LA-TOOL-DEFINITION"
    assert err.value.details["diagnostics"]


def test_tool_info_with_kwargs_function_accepts_extras_and_injects_key():
    def legacy(query, idempotency_key=None, **rest):
        return idempotency_key

    legacy.tool_info = {
        "tool_name": "legacy",
        "tool_description": "d",
        "tool_params": [{"name": "query", "type": "string"}],
    }
    t = as_tool(legacy)
    assert t.injected == {"idempotency_key": "idempotency_key"}
    assert "additionalProperties" not in t.parameters
    assert t.validate_arguments({"query": "q", "other": 1}) == {"query": "q", "other": 1}


def test_bound_methods_work_and_unbound_methods_are_refused():
    class Service:
        def __init__(self) -> None:
            self.prefix = "id"

        def lookup(self, key: str) -> str:
            """Look a key up.

            Args:
                key: The key.
            """
            return f"{self.prefix}:{key}"

    bound = tool(Service().lookup)
    assert list(bound.parameters["properties"]) == ["key"]
    assert bound(**bound.validate_arguments({"key": "k"})) == "id:k"
    with pytest.raises(ToolError) as info:
        tool(Service.lookup)
    assert info.value.code == "LA-TOOL-DEFINITION" and "bound method" in info.value.hint
