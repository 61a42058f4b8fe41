"""The selector in the loop: installed, it chooses for every agent with ``filter_tools=True``
(the default) and more than 16 tools; overlays, threads and removals keep it in step."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import ValidationError
from lightagent.plugins import get_registry
from lightagent.tools import ToolRegistry, selection_report
from lightagent.tools.selector import tool_selector
from lightagent_selection import SELECTOR, schema_tokens


def test_the_plugin_registers_the_bm25_selector() -> None:
    assert get_registry().names("tool_selector") == ["bm25"]
    assert tool_selector() is SELECTOR
    assert selection_report.__module__ == "lightagent_selection.selector"  # the moved name


def test_filter_tools_keeps_a_few_of_many(scripted_model: ScriptedModel) -> None:
    tools = []
    for i in range(40):
        topic = "weather forecast rain" if i == 7 else f"inventory item number{i}"

        def fn(x: str = "") -> str:
            return "ok"

        fn.tool_info = {
            "tool_name": f"tool_{i}",
            "tool_description": f"Look up {topic}.",
            "tool_params": [
                {"name": "x", "description": "input", "type": "string", "required": False}
            ],
        }
        tools.append(fn)
    scripted_model.add("fine")
    agent = LightAgent(model=scripted_model, tools=tools)
    result = agent.run("what is the weather forecast, rain?", result_format="object", trace=True)
    sent = [t["function"]["name"] for t in scripted_model.requests[0].tools]
    assert "tool_7" in sent and len(sent) <= 8
    selection = next(e for e in result.trace if e["type"] == "tool_selection")["data"]
    assert selection["tools_total"] == 40 and selection["tools_kept"] == len(sent)
    assert selection["schema_tokens_kept"] < selection["schema_tokens_total"]


def test_tool_selection_falls_back_to_all_tools() -> None:
    tools = []
    for i in range(20):

        def fn(x: str = "") -> str:
            return x

        tools.append(tool(fn, name=f"alpha_{i}", description=f"Alpha beta number {i}."))
    model = ScriptedModel(["none needed"])
    agent = LightAgent(model=model, tools=tools)
    result = agent.run("zzz qqq", result_format="object", trace=True)
    assert result.content == "none needed"
    assert len(model.requests[0].tools) == 20
    selection = next(e["data"] for e in result.trace if e["type"] == "tool_selection")
    assert selection["fallback"] == "all" and len(selection["kept"]) == 20
    # a query that matches keeps the selection (no fallback)
    model.add("ok")
    result = agent.run("alpha beta number 3", result_format="object", trace=True)
    selection = next(e["data"] for e in result.trace if e["type"] == "tool_selection")
    assert "fallback" not in selection and len(model.requests[1].tools) <= 8


def test_select_rejects_bad_limit() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    with pytest.raises(ValidationError) as info:
        ToolRegistry([add]).select("add", limit=-1)
    assert info.value.code == "LA-VALIDATION"


def test_unregister_and_shadowing_keep_the_index_and_tokens_in_step() -> None:
    @tool
    def search(query: str) -> str:
        """Search the web for a query."""
        return query

    @tool(name="search")
    def search_docs(query: str) -> str:
        """Search the documentation only, never the web."""
        return query

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    reg = ToolRegistry([add, search])
    total = schema_tokens(reg)
    assert reg.select("search query") == ["search"]
    assert reg.unregister_tool("search") is True
    assert reg.select("search query") == [] and schema_tokens(reg) < total
    base = ToolRegistry([add, search])
    run = base.with_tools([search_docs])  # shadows the base's search in the run only
    assert run.select("documentation") == ["search"] and base.select("documentation") == []
    assert schema_tokens(run) == schema_tokens(run, ["add", "search"])
    assert schema_tokens(run, ["search"]) == schema_tokens(ToolRegistry([search_docs]))
    assert run.selection_report(["search"])["tools_total"] == 2


def make_sync_user_tool(user: int):
    @tool(name="whoami")
    def whoami(delay: float) -> str:
        """Tell which user this run belongs to."""
        time.sleep(delay)
        return f"user-{user}"

    return whoami


def test_threads_rank_their_own_overlays() -> None:
    @tool
    def lookup(city: str) -> str:
        """Look up the weather of a city."""
        return city

    base = ToolRegistry([lookup])

    def run(user: int) -> list[str]:
        overlay = base.with_tools([make_sync_user_tool(user)])
        return overlay.select("which user does this run belong to")

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(run, range(40))) == [["whoami"]] * 40
    assert "whoami" not in base
