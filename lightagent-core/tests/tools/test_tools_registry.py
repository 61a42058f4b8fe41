"""ToolRegistry: registration, cached schemas, diagnostics, per-run overlays, filter_tools."""

from __future__ import annotations

import json

import pytest
from lightagent.errors import ToolError, ValidationError
from lightagent.tools import ToolRegistry, tool


def make_info_tool(name: str, description: str = "Does a thing.", params=None):
    def func(**kwargs):
        return kwargs

    func.tool_info = {
        "tool_name": name,
        "tool_description": description,
        "tool_params": params
        if params is not None
        else [{"name": "q", "type": "string", "description": "query"}],
    }
    return func


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first
        b: second
    """
    return a + b


def test_register_lookup_and_schemas_are_cached():
    reg = ToolRegistry()
    assert reg.register_tool(add) is True
    reg.register_tools([make_info_tool("search")])
    assert reg.names() == ["add", "search"] and len(reg) == 2
    assert "add" in reg and "nope" not in reg
    assert reg.get("add") is add and reg.get_tool("nope") is None
    first = reg.schemas()
    assert [s["function"]["name"] for s in first] == ["add", "search"]
    assert reg.schemas()[0] is first[0]  # same cached dicts
    assert reg.get_tools() == first == reg.openai_function_schemas
    assert json.loads(reg.get_tools_str()) == first
    assert reg.schemas(["search"]) == [first[1]]
    assert set(reg.function_mappings) == {"add", "search"}
    assert reg.function_info["search"]["tool_name"] == "search"


def test_register_returns_false_for_plain_callables_like_the_seeds():
    def plain(x: int) -> int:
        return x

    reg = ToolRegistry()
    assert reg.register_tool(plain) is False
    assert len(reg) == 0
    assert reg.register_tool(plain, infer=True) is True
    assert reg.get("plain").parameters["properties"]["x"]["type"] == "integer"


@pytest.mark.parametrize("bad", [42, "add", None, object()])
def test_register_rejects_non_tools_with_typed_error(bad):
    with pytest.raises(ToolError) as info:
        ToolRegistry().register_tool(bad)
    assert info.value.code == "LA-TOOL-DEFINITION"


def test_register_tools_needs_a_list():
    with pytest.raises(ToolError) as info:
        ToolRegistry().register_tools("add")
    assert info.value.code == "LA-TOOL-DEFINITION"


def test_schemas_for_unknown_names_raise_not_found():
    with pytest.raises(ToolError) as info:
        ToolRegistry([add]).schemas(["missing"])
    assert info.value.code == "LA-TOOL-NOT-FOUND"


def test_validate_tool_info_diagnostics():
    diags = ToolRegistry.validate_tool_info(
        {
            "tool_name": "bad name",
            "tool_params": [
                {"name": "a", "type": "text"},
                {"name": "b", "type": "array", "description": "list"},
                {"name": "1x", "type": "string", "description": "d"},
            ],
        }
    )
    by_field = {(d["field"], d["level"]) for d in diags}
    assert ("tool_name", "error") in by_field
    assert ("tool_description", "warning") in by_field
    assert ("tool_params[0].type", "error") in by_field
    assert ("tool_params[0].description", "warning") in by_field
    assert ("tool_params[1].items", "warning") in by_field
    assert ("tool_params[2].name", "error") in by_field
    assert all(set(d) == {"tool", "level", "field", "message"} for d in diags)
    assert diags[0]["tool"] == "bad name"
    good = make_info_tool("ok").tool_info
    assert ToolRegistry.validate_tool_info(good) == []
    assert ToolRegistry.validate_tool_info("x")[0]["level"] == "error"


@pytest.mark.parametrize("name", ["", "a" * 65, "has space", "dot.name", "ünïcode", 7])
def test_bad_names_are_errors(name):
    diags = ToolRegistry.validate_tool_info({"tool_name": name, "tool_description": "d"})
    assert any(d["level"] == "error" and d["field"] == "tool_name" for d in diags)


@pytest.mark.parametrize("name", ["a", "a" * 64, "get-weather", "get_weather_2"])
def test_good_names_pass(name):
    assert ToolRegistry.validate_tool_info({"tool_name": name, "tool_description": "d"}) == []


def test_strict_registration_refuses_bad_definitions_and_lenient_mode_reports_them():
    bad = make_info_tool("bad name")
    with pytest.raises(ToolError) as info:
        ToolRegistry().register_tool(bad)
    assert info.value.code == "LA-TOOL-DEFINITION"
    lenient = ToolRegistry(strict=False)
    assert lenient.register_tool(bad) is True
    assert any(d["level"] == "error" and d["tool"] == "bad name" for d in lenient.validate_tools())


def test_validate_tools_flags_duplicates_from_distinct_functions():
    reg = ToolRegistry()
    reg.register_tool(make_info_tool("search", "first"))
    reg.register_tool(make_info_tool("search", "second"))
    reg.register_tool(add)
    reg.register_tool(add)  # the same function again is not a duplicate
    diags = reg.validate_tools()
    dups = [d for d in diags if "distinct functions" in d["message"]]
    assert len(dups) == 1 and dups[0]["tool"] == "search" and dups[0]["level"] == "error"
    assert reg.get("search").description == "second"  # the last one wins
    assert len(reg) == 2


def test_validate_tools_warns_about_missing_descriptions():
    @tool
    def vague(x: int) -> int:
        return x

    diags = ToolRegistry([vague]).validate_tools()
    fields = {d["field"] for d in diags}
    assert {"description", "parameters.x.description"} <= fields
    assert all(d["level"] == "warning" for d in diags)


def test_unregister_updates_everything():
    reg = ToolRegistry([add, make_info_tool("search")])
    version = reg.version
    assert reg.unregister_tool("search") is True and reg.unregister_tool("search") is False
    assert reg.names() == ["add"] and "search" not in reg.own_tools()
    assert reg.version != version and len(reg.schemas()) == 1


def test_with_tools_overlays_without_mutating_the_base():
    base = ToolRegistry([add])
    base_schemas = base.schemas()
    extra = make_info_tool("search")
    run = base.with_tools([extra, "add"])
    assert run.names() == ["add", "search"] and len(run) == 2
    assert "search" in run and run.get("add") is add
    assert [s["function"]["name"] for s in run.schemas()] == ["add", "search"]
    assert base.names() == ["add"] and base.schemas() == base_schemas and "search" not in base
    # the overlay sees later registrations on the base, and its cache follows
    base.register_tool(make_info_tool("later"))
    assert run.names() == ["add", "later", "search"]
    assert [s["function"]["name"] for s in run.schemas()] == ["add", "later", "search"]


def test_with_tools_shadowing_and_plain_functions():
    def add(a: str) -> str:  # same name as the registered tool
        """Concatenate."""
        return a

    base = ToolRegistry([globals()["add"]])
    run = base.with_tools([add])
    assert run.get("add").func is add and base.get("add").func is not add
    assert len(run) == 1 and len(run.schemas()) == 1
    assert run.schemas()[0]["function"]["description"] == "Concatenate."
    assert any("shadows" in d["message"] for d in run.validate_tools())


def test_with_tools_unknown_names_and_bad_objects():
    base = ToolRegistry([add])
    with pytest.raises(ToolError) as info:
        base.with_tools(["not_registered"])
    assert info.value.code == "LA-TOOL-NOT-FOUND"
    with pytest.raises(ToolError) as info:
        base.with_tools([12])
    assert info.value.code == "LA-TOOL-DEFINITION"
    assert base.with_tools(None).names() == ["add"]


def test_filter_tools_accepts_seeds_json_and_names():
    reg = ToolRegistry([add, make_info_tool("search"), make_info_tool("fetch")])
    chosen = reg.filter_tools('{"tools": [{"name": "fetch"}, {"name": "ghost"}, {"name": "add"}]}')
    assert [s["function"]["name"] for s in chosen] == ["fetch", "add"]
    assert [s["function"]["name"] for s in reg.filter_tools(["search"])] == ["search"]
    with pytest.raises(ValidationError) as info:
        reg.filter_tools("{not json")
    assert info.value.code == "LA-JSON"


def test_directly_built_tools_are_checked_too():
    from lightagent.tools import Tool

    bad = Tool(
        name="bad name",
        description="d",
        parameters={"type": "object", "properties": {}},
        func=print,
    )
    with pytest.raises(ToolError) as info:
        ToolRegistry().register_tool(bad)
    assert info.value.code == "LA-TOOL-DEFINITION"
    assert ToolRegistry(strict=False).register_tool(bad) is True
    for kwargs in ({"name": 3}, {"parameters": None}, {"func": "not callable"}):
        fields = {
            "name": "ok",
            "description": "d",
            "parameters": {"type": "object"},
            "func": print,
            **kwargs,
        }
        with pytest.raises(ToolError) as info:
            Tool(**fields)
        assert info.value.code == "LA-TOOL-DEFINITION"


def test_decorator_accepts_func_keyword():
    def f(x: int) -> int:
        """F."""
        return x

    assert tool(func=f).name == "f"


def test_fit_tool_name_is_the_one_rule_for_names_from_elsewhere():
    from lightagent.tools.diagnostics import TOOL_NAME_PATTERN, fit_tool_name

    assert fit_tool_name("get_time") == ("get_time", None)
    assert fit_tool_name("a b")[0] == "a_b" and fit_tool_name("../etc/passwd")[0] == "etc_passwd"
    first, why = fit_tool_name("x" * 70 + "one")
    second, _ = fit_tool_name("x" * 70 + "two")
    assert why and first != second and all(TOOL_NAME_PATTERN.fullmatch(n) for n in (first, second))
    assert len(first) == 64
    for hidden in ("pay\u202emoc.exe", "echo\u200b", "tab\there", "\u0000"):
        name, why = fit_tool_name(hidden)
        assert name is None and "U+" in why
    assert fit_tool_name("天气")[0] is None and fit_tool_name("...")[0] is None
