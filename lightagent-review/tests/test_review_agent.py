"""lightagent-review through the agent and the seeds' spelling: a parked approval's own code,
``resolve(id=...)``."""

from __future__ import annotations

from lightagent import LightAgent, ScriptedModel, tool
from lightagent_review import (
    ApprovalDecision,
    ApprovalRequest,
    HumanApprovalHook,
    InMemoryReviewStore,
)

RAN: list[dict] = []


@tool
def lookup(city: str = "Paris") -> str:
    """Look up the weather of a city."""
    RAN.append({"city": city})
    return f"{city}: sunny"


def test_approval_pending_denial_carries_its_own_code() -> None:
    RAN.clear()
    model = ScriptedModel([{"tool_calls": [{"name": "lookup", "arguments": {}}]}, "waiting"])
    agent = LightAgent(model=model, tools=[lookup])
    agent.hooks.hooks.append(HumanApprovalHook(tools={"lookup"}))
    result = agent.run("q", result_format="object", trace=True)
    output = result.tool_calls[0]["output"]
    assert RAN == []
    assert output.startswith("Error [LA-APPROVAL-PENDING] Tool call lookup was denied:")
    assert "LA-HOOK" not in output and output.count("LA-APPROVAL-PENDING") == 1
    assert result.tool_calls[0]["error"]["code"] == "LA-APPROVAL-PENDING"
    blocks = [e["data"] for e in result.trace if e["type"] == "hook_block"]
    assert blocks[0]["code"] == "LA-APPROVAL-PENDING"


# -- the seeds' keywords (issue 18) -------------------------------------------------------


def test_review_store_resolve_id() -> None:
    store = InMemoryReviewStore()
    request = ApprovalRequest(request_id="r1", tool_name="pay", arguments={})
    store.create_request(request)
    decided = store.resolve(id="r1", decision=ApprovalDecision.approve())
    assert decided.approved


# -- the registered hook -------------------------------------------------------------------


def test_the_human_approval_hook_is_registered_by_name() -> None:
    RAN.clear()
    model = ScriptedModel([{"tool_calls": [{"name": "lookup", "arguments": {}}]}, "waiting"])
    agent = LightAgent(
        model=model, tools=[lookup], hooks=[("human_approval", {"tools": ["lookup"]})]
    )
    result = agent.run("q", result_format="object")
    (hook,) = agent.hooks.hooks
    assert isinstance(hook, HumanApprovalHook) and hook.tools == frozenset({"lookup"})
    assert RAN == [] and result.tool_calls[0]["error"]["code"] == "LA-APPROVAL-PENDING"
    assert len(hook.store.list_pending()) == 1
