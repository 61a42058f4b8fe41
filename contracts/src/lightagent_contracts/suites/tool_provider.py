"""The tool-provider contract suite: what a plugin registers through ``register_tools``.

Subclass :class:`ToolProviderContract` and provide a ``tools`` fixture returning the
objects the plugin registers (``@tool`` functions, ``Tool`` objects or seeds-style
``tool_info`` callables). Optionally provide ``tool_examples``: a list of
``(tool_name, arguments, check)`` where ``check(result) -> bool`` (or ``None`` to accept
any JSON-serialisable result)::

    class TestMyTools(ToolProviderContract):
        @pytest.fixture
        def tools(self):
            return [get_weather]

        @pytest.fixture
        def tool_examples(self):
            return [("get_weather", {"city": "Paris"}, lambda r: "Paris" in str(r))]
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import Any

import pytest
from lightagent.connectors.objects import check_tool_schema
from lightagent.errors import ToolError

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["ToolProviderContract"]

Example = tuple[str, dict[str, Any], Callable[[Any], bool] | None]


def _as_tools(objs: list[Any]) -> list[Any]:
    from lightagent.tools.decorator import as_tool

    return [as_tool(obj) for obj in objs]


def _run(tool: Any, arguments: dict[str, Any]) -> Any:
    args = tool.validate_arguments(arguments)
    result = tool.func(**args)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    elif inspect.isasyncgen(result):
        result = asyncio.run(_drain_async(result))
    elif inspect.isgenerator(result):
        result = list(result)
    return result


async def _await(result: Any) -> Any:
    return await result


async def _drain_async(agen: Any) -> list[Any]:
    return [item async for item in agen]


class ToolProviderContract(ContractSuite):
    """Behaviour every registered tool shows. Provide ``tools`` (and optionally ``tool_examples``)."""

    _contract_suite = True
    __test__ = False

    @pytest.fixture
    def tool_examples(self) -> list[Example]:
        """No examples unless the subclass gives some."""
        return []

    def test_provides_at_least_one_tool(self, tools: list[Any]) -> None:
        assert list(tools), "the tools fixture returned nothing"

    def test_each_object_is_a_tool(self, tools: list[Any]) -> None:
        for tool in _as_tools(list(tools)):
            assert callable(tool.func)

    def test_names_are_valid_and_unique(self, tools: list[Any]) -> None:
        names = [t.name for t in _as_tools(list(tools))]
        assert len(names) == len(set(names)), f"duplicate tool names: {names}"

    def test_schemas_are_valid_json_schema_objects(self, tools: list[Any]) -> None:
        for tool in _as_tools(list(tools)):
            schema = {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
            assert check_tool_schema(schema) == [], tool.name
            json.dumps(tool.openai_schema())  # must be JSON-serialisable as sent to a model

    def test_openai_schema_shape(self, tools: list[Any]) -> None:
        for tool in _as_tools(list(tools)):
            schema = tool.openai_schema()
            assert schema["type"] == "function"
            assert schema["function"]["name"] == tool.name
            assert schema["function"]["parameters"]["type"] == "object"

    def test_descriptions_tell_the_model_what_a_tool_does(self, tools: list[Any]) -> None:
        for tool in _as_tools(list(tools)):
            assert (tool.description or "").strip(), f"{tool.name} has no description"

    def test_missing_required_arguments_are_a_tool_error(self, tools: list[Any]) -> None:
        for tool in _as_tools(list(tools)):
            if not tool.parameters.get("required"):
                continue
            with pytest.raises(ToolError) as info:
                tool.validate_arguments({})
            assert info.value.code == "LA-TOOL-ARGS"

    def test_examples_run_and_give_serialisable_results(
        self, tools: list[Any], tool_examples: list[Example]
    ) -> None:
        by_name = {t.name: t for t in _as_tools(list(tools))}
        for name, arguments, check in tool_examples:
            assert name in by_name, f"example names unknown tool {name!r}"
            result = _run(by_name[name], arguments)
            json.dumps(result, default=str)
            if check is not None:
                assert check(result), f"{name}({arguments}) gave {result!r}"
