"""A step's tools get keys that stay the same across retries and resumes, and change on a rerun."""

from __future__ import annotations

from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import ModelError
from lightagent.run.ids import idempotency_key
from lightagent_flow import LightFlow


def _pay_agent(seen, replies):
    @tool
    def charge(item: str, idempotency_key: str) -> str:
        """Charge for an item."""
        seen.append(idempotency_key)
        return f"charged {item}"

    return LightAgent(name="payer", model=ScriptedModel(replies), tools=[charge])


def _round():
    return [{"tool_calls": [{"name": "charge", "arguments": {"item": "a"}}]}, "paid"]


def test_retries_reuse_the_keys_and_a_rerun_gets_new_ones(flow_store, run_id, flow_executor):
    seen: list[str] = []
    unavailable = ModelError("LA-503", "provider unavailable")
    # Attempt 1 charges, then its model call fails; attempt 2 charges again; then a rerun.
    replies = [_round()[0], unavailable, *_round(), *_round()]
    flow = LightFlow(executor=flow_executor, store=flow_store, retry_backoff=0).step(
        "pay", agent=_pay_agent(seen, replies), max_retry=2
    )
    first = flow.run("pay for a", run_id=run_id)
    assert first.status == "success" and first.steps["pay"].attempts == 2
    expected = idempotency_key(f"{run_id}:pay", 0, "charge", {"item": "a"})
    assert seen == [expected, expected]  # the retry is the same request: a tool deduplicates it
    again = flow.rerun_step(run_id, "pay")
    assert again.status == "success"
    assert seen[2] == idempotency_key(f"{run_id}:pay:rerun-1", 0, "charge", {"item": "a"})
    # The rerun generation is durable: a resume after it keeps using the rerun's keys.
    assert flow.get_run(run_id)["reruns"] == 1
