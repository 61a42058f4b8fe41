"""LightFlow with real LightAgent steps (ScriptedModel), on a real store and through the plugin host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lightagent_flow import JsonLightFlowStore, LightFlow

lightagent = pytest.importorskip("lightagent")


def _messages_text(model: Any) -> str:
    request = model.requests[-1]
    return "\n".join(str(m.get("content")) for m in request.messages)


def test_lightagent_steps_pass_outputs_and_tools(tmp_path: Path) -> None:
    from lightagent import LightAgent, ScriptedModel, tool

    @tool
    def lookup(company: str) -> str:
        """Look a company up."""
        return f"{company} makes anvils"

    research_model = ScriptedModel(
        [
            {"tool_calls": [{"name": "lookup", "arguments": {"company": "ACME"}}]},
            "ACME makes anvils.",
        ]
    )
    writer_model = ScriptedModel(["A short report on anvils."])
    research = LightAgent(name="research", model=research_model)
    writer = LightAgent(name="writer", model=writer_model)
    flow = (
        LightFlow(store=JsonLightFlowStore(tmp_path / "runs"))
        .step("research", agent=research, timeout=30, tools=[lookup])
        .step("write", agent=writer, depends_on=["research"], max_retry=2)
    )
    result = flow.run("Analyze ACME", run_id="report-001", trace=True, user_id="alice")
    assert result.success, result.error
    assert result.content == "A short report on anvils."
    assert "research: ACME makes anvils." in _messages_text(writer_model)
    step_trace = result.steps["research"].trace
    assert step_trace and {e["type"] for e in step_trace} >= {
        "run_start",
        "tool_call",
        "tool_result",
        "run_end",
    }
    assert all(
        e.get("parent_trace_id") == result.trace_id for e in step_trace if "parent_trace_id" in e
    )
    research_model.assert_exhausted()
    writer_model.assert_exhausted()
    assert flow.get_run("report-001")["steps"][1]["content"] == "A short report on anvils."


def test_a_model_error_fails_the_step_with_its_code_and_resume_recovers(tmp_path: Path) -> None:
    from lightagent import LightAgent, ModelError, ScriptedModel

    model = ScriptedModel([ModelError("LA-503", "down"), "recovered"])
    flow = LightFlow(store=JsonLightFlowStore(tmp_path)).step("only", agent=LightAgent(model=model))
    first = flow.run("q", run_id="m1")
    assert first.status == "failed" and first.steps["only"].error_code == "LA-503"
    resumed = flow.resume("m1")
    assert resumed.success and resumed.content == "recovered"
    model.assert_exhausted()


def test_lightflow_is_registered_as_a_workflow_provider() -> None:
    import lightagent_flow.plugin as plugin
    from lightagent.plugins import PluginHost

    host = PluginHost(entry_points=False, builtins=False, plugins=[("lightagent-flow", plugin)])
    entry = host.registry.get("workflow", "lightflow")
    assert entry.is_lazy
    from lightagent_flow import LightFlow as Exported

    assert entry.load() is Exported
    manifest = plugin.lightagent_manifest()
    assert manifest["name"] == "lightagent-flow" and manifest["version"] and manifest["docs"]
    assert manifest["description"]


def test_one_lightagent_shared_by_parallel_steps_keeps_runs_apart() -> None:
    from lightagent import LightAgent, ScriptedModel

    def echo(request: Any) -> str:
        last = [m for m in request.messages if m.get("role") == "user"][-1]["content"]
        return f"answer to {last}"

    shared = LightAgent(name="shared", model=ScriptedModel(echo))
    flow = LightFlow()
    for i in range(6):
        flow.step(f"q{i}", agent=shared, query=f"question {i}")
    result = flow.run("ignored", trace=True)
    assert result.success, result.error
    assert {n: s.content for n, s in result.steps.items()} == {
        f"q{i}": f"answer to question {i}" for i in range(6)
    }
    run_ids = {s.trace[0].get("run_id") for s in result.steps.values() if s.trace}
    assert len(run_ids) == 6  # six separate agent runs, no shared per-run state


def test_seeds_checkpoint_example_over_the_openai_wire(
    loopback_server: Any, tmp_path: Path
) -> None:
    """The seeds' "Checkpoint a LightFlow Run", with real LightAgents on a loopback OpenAI server."""
    from lightagent import LightAgent
    from lightagent_contracts.loopback import LoopbackServer

    loopback_server.reply(
        "ACME sells anvils.",
        # 400 is never retried inside the model client, so each flow attempt costs one reply.
        LoopbackServer.error(400, {"error": {"message": "context too long"}}),
        LoopbackServer.error(400, {"error": {"message": "context too long"}}),
        "Report: anvils.",
    )

    def agent() -> LightAgent:
        return LightAgent(
            model="gpt-4.1", api_key="your_api_key", base_url=loopback_server.base_url
        )

    store = JsonLightFlowStore(tmp_path / ".lightflow_runs")
    flow = (
        LightFlow(store=store, retry_backoff=0)
        .step("research", agent=agent(), timeout=30)
        .step("write", agent=agent(), depends_on=["research"], max_retry=2)
    )
    result = flow.run("Analyze this company", run_id="report-001", trace=True)
    if not result.success:
        assert result.steps["write"].error_code == "LA-400"
        assert result.steps["write"].attempts == 2
        result = flow.resume("report-001")
    assert result.status == "success" and result.content == "Report: anvils."
    assert [s["status"] for s in flow.get_run("report-001")["steps"]] == ["success", "success"]
    research_calls = [
        b
        for b in loopback_server.requests
        if b["messages"][-1]["content"] == "Analyze this company"
    ]
    assert len(research_calls) == 1  # resume never re-ran the committed research step
    last = loopback_server.requests[-1]["messages"][-1]["content"]
    assert last == "Analyze this company\n\nPrevious step outputs:\nresearch: ACME sells anvils."
