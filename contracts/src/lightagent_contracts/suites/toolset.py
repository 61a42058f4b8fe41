"""The toolset contract suite (``list_tools``, ``call_tool``, an async lifecycle).

Subclass :class:`ToolsetContract` and provide ``make_toolset``: a zero-argument factory
returning a fresh, unopened toolset. Optionally provide ``toolset_examples``: a list of
``(tool_name, arguments, check)`` run through a real agent loop, where ``check(output)``
receives the text the model would read (``None`` accepts any successful call)::

    class TestMyToolset(ToolsetContract):
        @pytest.fixture
        def make_toolset(self):
            return lambda: UnitsToolset()

        @pytest.fixture
        def toolset_examples(self):
            return [("km_to_miles", {"km": 10}, lambda out: out.startswith("6.2"))]
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["ToolsetContract"]

Example = tuple[str, dict[str, Any], Callable[[str], bool] | None]
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _definitions(owner: Any) -> list[Any]:
    from lightagent.toolsets.router import to_definition

    return [to_definition(item) for item in owner.list() or ()]


def _exposed(toolset: Any, name: str) -> str:
    from lightagent.toolsets.router import qualified_name

    if getattr(toolset, "namespace_tools", False):
        return qualified_name(str(getattr(toolset, "namespace", None) or "toolset"), name)
    return name


class ToolsetContract(ContractSuite):
    """Behaviour every toolset shows. Provide ``make_toolset`` (and ``toolset_examples``)."""

    _contract_suite = True
    __test__ = False

    @pytest.fixture
    def toolset_examples(self) -> list[Example]:
        """No examples unless the subclass gives some."""
        return []

    def test_is_a_toolset(self, make_toolset: Callable[[], Any]) -> None:
        from lightagent.toolsets.protocol import is_toolset

        toolset = make_toolset()
        assert is_toolset(toolset), "a toolset has list_tools() and call_tool()"
        assert callable(getattr(toolset, "__aenter__", None))
        assert callable(getattr(toolset, "__aexit__", None))

    def test_lists_valid_definitions(self, make_toolset: Callable[[], Any]) -> None:
        from lightagent.toolsets.owner import ToolsetOwner

        owner = ToolsetOwner(make_toolset())
        try:
            definitions = _definitions(owner)
            again = _definitions(owner)
        finally:
            owner.close()
        assert definitions, "the toolset lists no tool"
        names = [d.name for d in definitions]
        assert len(names) == len(set(names)), f"duplicate tool names: {names}"
        for definition in definitions:
            assert _NAME.fullmatch(definition.name), definition.name
            assert definition.description.strip(), f"{definition.name} has no description"
            assert definition.parameters.get("type") == "object", definition.name
            json.dumps(definition.parameters)  # sent to a model as JSON
        assert [d.definition_hash for d in definitions] == [d.definition_hash for d in again], (
            "an unchanged tool list must hash the same"
        )

    def test_enters_and_exits_more_than_once(self, make_toolset: Callable[[], Any]) -> None:
        toolset = make_toolset()

        async def cycle() -> None:
            async with toolset:
                pass

        asyncio.run(cycle())
        asyncio.run(cycle())

    def test_works_from_sync_code_any_loop_and_another_thread(
        self, make_toolset: Callable[[], Any], toolset_examples: list[Example]
    ) -> None:
        from lightagent.toolsets.owner import ToolsetOwner
        from lightagent.toolsets.protocol import ToolCallContext

        owner = ToolsetOwner(make_toolset())
        asyncio.run(owner.aopen())  # opened from a loop that is gone afterwards
        try:
            assert asyncio.run(owner.alist())
            for name, arguments, check in toolset_examples:
                result = asyncio.run(owner.acall(name, arguments, ToolCallContext(run_id="r")))
                if check is not None:
                    from lightagent.tools.output import format_output

                    text = format_output(getattr(result, "content", result))
                    assert check(text), f"{name}({arguments}) gave {text!r}"
        finally:
            closer = threading.Thread(target=owner.close)
            closer.start()
            closer.join(30)
        assert not closer.is_alive(), "closing the toolset from another thread hung"

    def test_unknown_tool_is_refused(self, make_toolset: Callable[[], Any]) -> None:
        from lightagent.toolsets.owner import ToolsetOwner
        from lightagent.toolsets.protocol import ToolCallContext, ToolResult

        owner = ToolsetOwner(make_toolset())
        try:
            try:
                result = owner.list() and asyncio.run(
                    owner.acall("no_such_tool_zz", {}, ToolCallContext())
                )
            except Exception:
                return
            assert isinstance(result, ToolResult) and result.is_error, (
                "calling an unknown tool must raise or return ToolResult(is_error=True)"
            )
        finally:
            owner.close()

    def test_change_notification_is_well_formed(self, make_toolset: Callable[[], Any]) -> None:
        toolset = make_toolset()
        version = getattr(toolset, "version", None)
        assert version is None or isinstance(version, int)
        if callable(getattr(toolset, "subscribe", None)):
            assert callable(getattr(toolset, "unsubscribe", None))
            calls: list[int] = []

            def listener() -> None:
                calls.append(1)

            toolset.subscribe(listener)
            toolset.unsubscribe(listener)

    def test_examples_run_through_an_agent(
        self, make_toolset: Callable[[], Any], toolset_examples: list[Example]
    ) -> None:
        from lightagent import LightAgent, ScriptedModel

        toolset = make_toolset()
        calls = [
            {"name": _exposed(toolset, name), "arguments": arguments}
            for name, arguments, _ in toolset_examples
        ]
        replies: list[Any] = [{"tool_calls": calls}, "done"] if calls else ["done"]
        model = ScriptedModel(replies)
        agent = LightAgent(model=model, tools=[toolset])
        try:
            result = agent.run("use the tools", result_format="object")
        finally:
            agent.close()
        assert result.error is None, result.error
        assert model.requests[0].tools, "the agent offered none of the toolset's tools"
        for (name, arguments, check), record in zip(
            toolset_examples, result.tool_calls, strict=True
        ):
            assert record["error"] is None, f"{name}({arguments}) failed: {record['output']}"
            if check is not None:
                assert check(record["output"]), f"{name}({arguments}) gave {record['output']!r}"
