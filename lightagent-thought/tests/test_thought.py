"""Tree of Thought: planning and reflection over the run's real tools, bounded, recorded as events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lightagent import LightAgent, ScriptedModel, TreeOfThought, tool
from lightagent.errors import ConfigurationError


@tool
def get_order(order_id: str) -> str:
    """Look up an order's status.

    Args:
        order_id: The order number.
    """
    return f"order {order_id}: shipped"


PLANS = {
    "plans": [
        {
            "steps": [
                {"step": "Look the order up", "tool": "get_order"},
                {"step": "Report", "tool": None},
            ]
        },
        {"steps": [{"step": "Search the web", "tool": "web_search"}]},
    ]
}
REFLECTION = {"choice": 1, "reflection": "Plan 2 needs a tool that does not exist."}


def test_plan_and_reflection_use_the_real_tools_over_the_wire(loopback_server) -> None:
    loopback_server.reply(
        json.dumps(PLANS),
        "```json\n" + json.dumps(REFLECTION) + "\n```",
        {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "7"}}]},
        "Order 7 has shipped.",
    )
    agent = LightAgent(
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        tools=[get_order],
        tree_of_thought=True,
    )
    result = agent.run("Where is order 7?", result_format="object", trace=True)
    assert result.content == "Order 7 has shipped."
    plan_req, reflect_req, first, _ = loopback_server.requests
    # the planner is shown the tools this run really offers, and is not offered tools itself
    assert "get_order(order_id): Look up an order's status." in plan_req["messages"][1]["content"]
    assert "tools" not in plan_req
    # the reflection is told which step names a tool that does not exist
    assert (
        "These tools do not exist and cannot be called: web_search."
        in reflect_req["messages"][1]["content"]
    )
    # the chosen plan reaches the run's own first request, in its system message
    system = first["messages"][0]["content"]
    assert "1. Look the order up (tool: get_order)" in system and "Search the web" not in system
    assert "Reflection: Plan 2 needs a tool" in system
    types = [e["type"] for e in result.trace]
    assert types[:3] == ["run_start", "thought_plan", "thought_reflection"]
    plan = next(e for e in result.trace if e["type"] == "thought_plan")["data"]
    assert plan["unknown_tools"] == ["web_search"] and len(plan["plans"]) == 2
    end = next(e for e in result.trace if e["type"] == "run_end")["data"]
    assert end["model_request_count"] == 4  # two planning calls, bounded, plus the run's two
    # planning answers never enter the conversation
    assert all("plans" not in (m.get("content") or "") for m in result.messages)


def test_a_separate_tot_model_takes_the_planning_calls() -> None:
    planner = ScriptedModel([json.dumps(PLANS), json.dumps(REFLECTION)])
    worker = ScriptedModel(["done"])
    agent = LightAgent(model=worker, tree_of_thought=True, tot_model=planner, tools=[get_order])
    assert agent.run("where is 7?") == "done"
    planner.assert_exhausted()
    worker.assert_exhausted()
    assert agent.tot_model is planner


def test_streamed_runs_plan_first_and_stream_the_thought() -> None:
    model = ScriptedModel([json.dumps(PLANS), json.dumps(REFLECTION), "streamed answer"])
    agent = LightAgent(model=model, tree_of_thought=True, tools=[get_order])

    async def collect() -> list[Any]:
        return [e async for e in agent.astream("where?", result_format="event")]

    events = asyncio.run(collect())
    thought = next(e for e in events if e.type == "thought")
    assert thought.data["steps"][0] == {"step": "Look the order up", "tool": "get_order"}
    assert "".join(e.data for e in events if e.type == "content") == "streamed answer"


def test_free_text_plans_and_no_reflection() -> None:
    model = ScriptedModel(["1. think\n2. answer", "final"])
    agent = LightAgent(model=model, tree_of_thought=TreeOfThought(reflect=False))
    result = agent.run("q", result_format="object", trace=True)
    assert result.content == "final"
    assert [e["type"] for e in result.trace].count("thought_reflection") == 0
    plan = next(e for e in result.trace if e["type"] == "thought_plan")["data"]
    assert plan["plans"] == [
        [{"step": "1. think", "tool": None}, {"step": "2. answer", "tool": None}]
    ]


def test_run_thought_returns_the_plan_and_makes_only_the_planning_calls() -> None:
    model = ScriptedModel([json.dumps(PLANS), json.dumps(REFLECTION)])
    agent = LightAgent(model=model)
    text = agent.run_thought("Where is order 7?", runtime_tools=[get_order])
    assert text.startswith("Plan (made before answering")
    assert "1. Look the order up (tool: get_order)" in text
    model.assert_exhausted()


def test_a_failing_planning_call_fails_the_run_typed() -> None:
    from lightagent.errors import ModelError

    agent = LightAgent(model=ScriptedModel([ModelError("LA-503", "down")]), tree_of_thought=True)
    result = agent.run("q", result_format="object", trace=True)
    assert result.error["code"] == "LA-503"
    assert next(e for e in result.trace if e["type"] == "error")["data"]["stage"] == "thought"


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError):
        LightAgent(model=ScriptedModel(), tree_of_thought="yes")
    with pytest.raises(ConfigurationError):
        TreeOfThought(branches=0)
