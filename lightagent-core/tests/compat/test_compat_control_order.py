"""Item 9 of issue 18: order and names at the control boundaries, as in the seeds."""

from __future__ import annotations

from lightagent import GuardrailDecision, HookDecision, LightAgent, ScriptedModel


def echo(text: str) -> str:
    """Echo `text`."""
    return f"echo: {text}"


def test_tool_guardrail_rewrite_runs_before_the_before_tool_call_hook() -> None:
    seen: list[dict] = []

    def rewrite(value, ctx):
        return GuardrailDecision(True, value={"text": value["arguments"]["text"].upper()})

    def hook(c):
        if c.phase == "before_tool_call":
            seen.append(dict(c.payload["arguments"]))
        return None

    model = ScriptedModel([{"tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}]}, "done"])
    agent = LightAgent(model=model, tools=[echo], tool_guardrails=[rewrite], hooks=[hook])
    assert agent.run("go") == "done"
    assert seen == [{"text": "HI"}]
    assert model.requests[1].messages[-1]["content"] == "echo: HI"


def test_on_error_after_a_before_model_request_block_names_that_stage() -> None:
    stages: list[str] = []

    def hook(c):
        if c.phase == "before_model_request":
            return HookDecision.block("no model today")
        if c.phase == "on_error":
            stages.append(c.payload["stage"])
        return None

    agent = LightAgent(model=ScriptedModel([]), hooks=[hook])
    result = agent.run("q", result_format="object")
    assert result.error is not None
    assert stages == ["before_model_request"]
