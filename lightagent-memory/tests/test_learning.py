"""The self-learning note: what a finished run proposes to remember (handed to memory as a candidate)."""

from __future__ import annotations

from lightagent import LightAgent, ScriptedModel, tool
from lightagent_memory.learning import MAX_NOTE_CHARS, learning_note, learning_scope
from lightagent_thought import Thought


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return "shipped"


@tool
def broken(x: str) -> str:
    """Always fails."""
    raise RuntimeError("down")


def test_the_note_comes_from_the_runs_own_record() -> None:
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "lookup", "arguments": {"order_id": "7"}},
                    {"name": "broken", "arguments": {"x": "y"}},
                ]
            },
            "Order 7 shipped.",
        ]
    )
    agent = LightAgent(model=model, tools=[lookup, broken])
    result = agent.run("Where is order 7?", result_format="object")
    thought = Thought(plans=[], reflection="Look it up before answering.")
    note = learning_note("Where is order 7?", result.content, result.tool_calls, thought)
    assert note == (
        "When asked: Where is order 7?\n"
        "Planning noted: Look it up before answering.\n"
        "Tools that worked: lookup\n"
        "Tools that failed: broken\n"
        "The agent answered: Order 7 shipped."
    )


def test_nothing_to_learn_and_bounded_notes() -> None:
    assert learning_note("q", None) is None
    assert learning_note("", "a") is None
    assert len(learning_note("q", "a" * 10_000) or "") == MAX_NOTE_CHARS
    assert learning_scope("bot") == {
        "source": "reflection",
        "scope": "agent",
        "agent_name": "bot",
        "metadata": {"kind": "self_learning"},
    }
