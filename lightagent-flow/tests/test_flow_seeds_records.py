"""Issue 28, item 3: LightFlow records as the seeds show them — steps that have not started
are ``pending`` in ``get_run()``, and a rejected approval reads as the reviewer's reason."""

from __future__ import annotations

from typing import Any

from lightagent import LightAgent, ScriptedModel
from lightagent_flow import JsonLightFlowStore, LightFlow


def test_get_run_lists_steps_that_have_not_started_as_pending(tmp_path: Any) -> None:
    def later(step: Any, context: Any) -> Any:
        return {"approved": False, "reason": "wait for Monday"}

    flow = (
        LightFlow(store=JsonLightFlowStore(tmp_path / "runs"))
        .step("research", agent=LightAgent(model=ScriptedModel(["facts"])))
        .step(
            "write",
            agent=LightAgent(model=ScriptedModel(["draft"])),
            depends_on=["research"],
            requires_approval=True,
            approval_handler=later,
        )
        .step("publish", agent=LightAgent(model=ScriptedModel([])), depends_on=["write"])
    )
    result = flow.run("go", run_id="r1")
    assert result.status == "waiting_approval"
    steps = flow.get_run("r1")["steps"]
    assert [(s["name"], s["status"]) for s in steps] == [
        ("research", "success"),
        ("write", "waiting_approval"),
        ("publish", "pending"),
    ]
    assert flow.get_run("nope") is None


def test_a_rejected_approval_reads_as_the_reviewers_reason(tmp_path: Any) -> None:
    def decline(step: Any, context: Any) -> Any:
        return {"action": "reject", "reason": "the numbers are not final"}

    flow = (
        LightFlow(store=JsonLightFlowStore(tmp_path / "runs"))
        .step(
            "write",
            agent=LightAgent(model=ScriptedModel([])),
            requires_approval=True,
            approval_handler=decline,
        )
        .step("publish", agent=LightAgent(model=ScriptedModel([])), depends_on=["write"])
    )
    result = flow.run("go", run_id="r2")
    assert result.status == "failed"
    write = result.steps["write"]
    assert write.status == "failed" and write.error == "the numbers are not final"
    assert write.error_code == "LA-APPROVAL"
    assert result.error == "the numbers are not final"
    assert flow.get_run("r2")["steps"][0]["error"] == "the numbers are not final"
