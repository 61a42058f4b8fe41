"""Tool-call keys derive from the caller's idempotency key when one is given, and a resume keeps them."""

from __future__ import annotations

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.events.manager import SessionManager
from lightagent.events.resume import resume
from lightagent.events.sql_store import SqliteSessionStore
from lightagent.run.ids import idempotency_key


def _charging_agent(seen, replies, **kwargs):
    @tool
    def charge(item: str, idempotency_key: str) -> str:
        """Charge for an item."""
        seen.append(idempotency_key)
        return f"charged {item}"

    return LightAgent(model=ScriptedModel(replies), tools=[charge], **kwargs)


def _one_round():
    return [{"tool_calls": [{"name": "charge", "arguments": {"item": "a"}}]}, "done"]


def test_the_same_request_gets_the_same_tool_keys_and_another_request_new_ones():
    seen: list[str] = []
    agent = _charging_agent(seen, _one_round() * 5)
    for key in ("order-7", "order-7", "order-8", None, None):
        assert agent.run("charge a", idempotency_key=key) == "done"
    assert seen[0] == seen[1] == idempotency_key("order-7", 0, "charge", {"item": "a"})
    assert seen[2] == idempotency_key("order-8", 0, "charge", {"item": "a"})
    # Without a caller key each run is its own request: keys come from the run id.
    assert len({seen[0], seen[2], seen[3], seen[4]}) == 4


class Crash(BaseException):
    """Stands in for the process dying inside a tool."""


def test_a_resumed_run_keeps_the_callers_key_for_its_later_rounds(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    seen: list[str] = []
    crashes = ["b"]

    @tool
    def charge(item: str, idempotency_key: str) -> str:
        """Charge for an item."""
        if item in crashes:
            crashes.remove(item)
            raise Crash(item)  # before any effect
        seen.append(idempotency_key)
        return f"charged {item}"

    script = [
        {"tool_calls": [{"name": "charge", "arguments": {"item": "b"}}]},
        {"tool_calls": [{"name": "charge", "arguments": {"item": "c"}}]},
        "done",
    ]
    model = ScriptedModel(script)
    agent = LightAgent(model=model, tools=[charge], session_store=store)
    with pytest.raises(Crash):
        agent.run("charge b then c", session_id="s", idempotency_key="order-9")
    (run_id,) = SessionManager(store).replay("s").incomplete_runs
    assert resume(agent, run_id, session_id="s", approve=True) == "done"
    assert seen == [
        idempotency_key("order-9", 0, "charge", {"item": "b"}),
        idempotency_key("order-9", 1, "charge", {"item": "c"}),
    ]
