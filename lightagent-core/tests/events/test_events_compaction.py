"""Session compaction: a context.compacted event that history projections honour."""

from __future__ import annotations

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent.errors import ValidationError
from lightagent.events.binding import SessionBinding
from lightagent.events.manager import SessionManager
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.projector import SUMMARY_PREFIX


def test_session_compaction_is_an_event_that_history_honours():
    store = InMemorySessionStore()
    model = ScriptedModel([f"answer {i}" for i in range(5)])
    agent = LightAgent(model=model, session_store=store)
    for i in range(4):
        agent.run(f"question {i}", session_id="c")
    manager = SessionManager(store)
    data = manager.compact("c", max_messages=2, summarizer=lambda removed: f"{len(removed)} msgs")
    assert data["kept_turns"] == 1 and data["removed_messages"] == 6 and data["summary"] == "6 msgs"
    assert manager.events("c")[-1].type == "context.compacted"
    history = SessionBinding(store).history("c")
    assert history == [
        {"role": "user", "content": SUMMARY_PREFIX + "6 msgs"},
        {"role": "user", "content": "question 3"},
        {"role": "assistant", "content": "answer 3"},
    ]
    agent.run("question 4", session_id="c")
    assert [m["content"] for m in model.requests[-1].messages[1:]] == [
        SUMMARY_PREFIX + "6 msgs",
        "question 3",
        "answer 3",
        "question 4",
    ]
    # A second compaction folds the first summary in; nothing to do returns None.
    again = manager.compact(
        "c", max_messages=2, summarizer=lambda removed: removed[0]["content"][-6:]
    )
    assert again["summary"] == "6 msgs"
    assert manager.compact("c", max_messages=100) is None
    with pytest.raises(ValidationError):
        manager.compact("c", max_messages=-1)
    # The full log is untouched: replay still counts every turn.
    assert len(manager.replay("c").completed_turns) == 5
