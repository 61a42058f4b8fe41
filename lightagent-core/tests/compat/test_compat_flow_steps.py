"""Item 2 of issue 18: ``LightFlowResult.steps`` is the seeds' list of step results in order."""

from __future__ import annotations

import pytest
from lightagent import LightAgent, ScriptedModel

lightagent_flow = pytest.importorskip("lightagent_flow")


def test_steps_is_a_list_in_step_order_that_also_answers_by_name() -> None:
    flow = (
        lightagent_flow.LightFlow()
        .step("fetch", agent=LightAgent(model=ScriptedModel(["data"])))
        .step("summarize", agent=LightAgent(model=ScriptedModel(["summary"])), depends_on="fetch")
    )
    result = flow.run("go")
    assert isinstance(result.steps, list)
    assert [s.name for s in result.steps] == ["fetch", "summarize"]
    assert result.steps[0].name == "fetch" and result.steps[-1].content == "summary"
    assert all(isinstance(s, lightagent_flow.LightFlowStepResult) for s in result.steps)
    # The dict form and stored records list the same steps in the same order.
    assert [s["name"] for s in result.to_dict()["steps"]] == [s.name for s in result.steps]
    # Lookup by name: a helper on the list.
    assert result.steps["summarize"] is result.steps.get("summarize") is result.steps[1]
    assert "fetch" in result.steps and result.steps.get("nope") is None
    with pytest.raises(KeyError):
        result.steps["nope"]
