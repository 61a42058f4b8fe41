"""The tool-provider contract suite: what a plugin registers through ``register_tools``.

Subclass :class:`ToolProviderContract` and provide a ``tools`` fixture returning the
objects the plugin registers (``@tool`` functions, ``Tool`` objects or seeds-style
``tool_info`` callables). Optionally provide ``tool_examples``: a list of
``(tool_name, arguments, check)``; each example runs through the real dispatcher (as the
agent loop runs it) and ``check(output) -> bool`` receives the text the model would see
(``None`` accepts any successful call)::

    class TestMyTools(ToolProviderContract):
        @pytest.fixture
        def tools(self):
            return [get_weather]

        @pytest.fixture
        def tool_examples(self):
            return [("get_weather", {"city": "Paris"}, lambda output: "Paris" in output)]
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from lightagent.errors import ToolError

from lightagent_contracts.connectors.objects import check_tool_schema
from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["ToolProviderContract"]

Example = tuple[str, dict[str, Any], Callable[[Any], bool] | None]


def _as_tools(objs: list[Any]) -> list[Any]:
    from lightagent.tools.decorator import as_tool

    return [as_tool(obj) for obj in objs]


def _dispatch(objs: list[Any], examples: list[Example]) -> list[Any]:
    from lightagent.models.base import ToolCall
    from lightagent.tools.dispatch import AsyncToolDispatcher
    from lightagent.tools.registry import ToolRegistry

    registry = ToolRegistry()
    registry.register_tools(objs)
    dispatcher = AsyncToolDispatcher(registry, default_timeout=30.0)
    calls = [
        ToolCall(id=f"call_{i}", name=name, arguments=json.dumps(arguments), index=i)
        for i, (name, arguments, _) in enumerate(examples)
    ]
    try:
        return dispatcher.run_calls(calls)
    finally:
        dispatcher.close()


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

    def test_examples_run_through_the_dispatcher(
        self, tools: list[Any], tool_examples: list[Example]
    ) -> None:
        names = {t.name for t in _as_tools(list(tools))}
        for name, _, _ in tool_examples:
            assert name in names, f"example names unknown tool {name!r}"
        outcomes = _dispatch(list(tools), list(tool_examples))
        for (name, arguments, check), outcome in zip(tool_examples, outcomes, strict=True):
            assert outcome.error is None, f"{name}({arguments}) failed: {outcome.output}"
            assert isinstance(outcome.output, str)
            if check is not None:
                assert check(outcome.output), f"{name}({arguments}) gave {outcome.output!r}"
