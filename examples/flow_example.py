"""The seeds' LightFlow examples ("Checkpoint a LightFlow Run" and "10. LightFlow Workflows").

Offline by default: scripted models answer, so no API key or network is needed. Set
OPENAI_API_KEY, or LIGHTAGENT_BASE_URL for any OpenAI-compatible server, to use a real
model (LIGHTAGENT_MODEL picks it; default gpt-4.1). Run: python examples/flow_example.py
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from lightagent import LightAgent, ModelError, ScriptedModel
from lightagent_flow import JsonLightFlowStore, LightFlow

REAL = bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("LIGHTAGENT_BASE_URL"))


def agent(name: str, *replies: Any) -> LightAgent:
    """A LightAgent on the real endpoint, or on a scripted model answering ``replies``."""
    if REAL:
        return LightAgent(
            name=name,
            model=os.environ.get("LIGHTAGENT_MODEL", "gpt-4.1"),
            base_url=os.environ.get("LIGHTAGENT_BASE_URL"),
        )
    return LightAgent(name=name, model=ScriptedModel(list(replies)))


runs = tempfile.mkdtemp(prefix="lightflow_runs-")

# --- Checkpoint a LightFlow Run -------------------------------------------------------
# The writer fails twice (a provider outage), so the run fails after its two attempts;
# resume() continues it without running the research step again.
research_agent = agent("research", "ACME sells anvils to coyotes; revenue grew 12%.")
writer_agent = agent(
    "writer",
    ModelError("LA-503", "provider unavailable"),
    ModelError("LA-503", "provider unavailable"),
    "ACME: a steady anvil business, growing 12% a year.",
)
store = JsonLightFlowStore(runs)
flow = (
    LightFlow(store=store, retry_backoff=0.01)
    .step("research", agent=research_agent, timeout=30)
    .step("write", agent=writer_agent, depends_on=["research"], max_retry=2)
)
result = flow.run("Analyze this company", run_id="report-001", trace=True)
if not result.success:
    print("first attempt:", result.status, "-", result.error)
    result = flow.resume("report-001")
print(result.status, "-", result.content)
record = flow.get_run("report-001")  # the stored record, or None for an unknown run id
assert record is not None
print([(s["name"], s["status"], s["attempts"]) for s in record["steps"]])

# --- 10. LightFlow Workflows ----------------------------------------------------------
draft_agent = agent("draft", "Customer asked for a refund; we offered store credit.")
review_agent = agent("review", "Summary approved: refund handled with store credit.")
backup_agent = agent("backup")


def approve(step: Any, context: dict[str, Any]) -> dict[str, Any]:
    return {"approved": True, "reason": "Approved by policy."}


flow = (
    LightFlow(store=store)
    .step("draft", agent=draft_agent, timeout=30, max_retry=2)
    .step(
        "review",
        agent=review_agent,
        depends_on=["draft"],
        requires_approval=True,
        approval_handler=approve,
        fallback_agent=backup_agent,
    )
)
validation = flow.validate(strict=True)
if validation["errors"]:
    raise ValueError(validation["errors"])
result = flow.run("Prepare a customer support summary.", run_id="case-001", trace=True)
record = flow.get_run("case-001")
assert record is not None
print(result.status, "-", result.content)
print(
    "approval:",
    record["approvals"]["review"]["action"],
    "-",
    record["approvals"]["review"]["reason"],
)

# --- A human approval, persisted, applied by resume() (any process sharing the store) --
publish_agent = agent("publish", "Published the summary to the help center.")
flow = (
    LightFlow(store=store)
    .step("draft", agent=agent("draft", "Draft of the announcement."))
    .step("publish", agent=publish_agent, depends_on=["draft"], requires_approval=True)
)
waiting = flow.run("Announce the new refund policy.", run_id="case-002")
print(waiting.status, "- request", waiting.steps["publish"].approval_request_id)
flow.approve(
    "case-002", "publish", {"action": "approve", "reason": "Looks good.", "reviewer_id": "ana"}
)
print(flow.resume("case-002").content)
print("runs:", [(r["run_id"], r["status"]) for r in flow.list_runs()])
shutil.rmtree(runs)  # the example cleans up after itself
