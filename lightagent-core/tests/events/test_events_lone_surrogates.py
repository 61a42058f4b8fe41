"""A lone surrogate (JSON's ``\\ud800`` escape decodes to one) is written as U+FFFD wherever
text is hashed, stored or sent: the run goes on, the stores keep everything, the model gets
valid UTF-8."""

from __future__ import annotations

import json

import pytest
from lightagent import JsonlSessionStore, LightAgent, SqliteSessionStore, tool
from lightagent.digest import canonical_digest
from lightagent.errors import ValidationError
from lightagent.models.arguments import load_arguments, normalize_arguments
from lightagent.run.ids import idempotency_key
from lightagent.utf8 import clean_text, utf8


def test_the_rule_lone_ones_become_u_fffd_pairs_their_character() -> None:
    assert clean_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert clean_text("\ud83d\ude00") == "😀"  # two code points that form a pair
    plain = "déjà vu 😀"
    assert clean_text(plain) is plain
    assert utf8("x\udc00") == "x\ufffd".encode()


def test_hashes_take_lone_surrogates_as_u_fffd() -> None:
    raw, clean = '{"q": "\\ud800x"}', {"q": "\ufffdx"}
    assert idempotency_key("run_1", 0, "search", raw) == idempotency_key(
        "run_1", 0, "search", clean
    )
    assert idempotency_key("run_1", 0, "search", {"q": "\ud800x"}) == idempotency_key(
        "run_1", 0, "search", clean
    )
    assert canonical_digest({"q": "\ud800x"}) == canonical_digest(clean)


def test_tool_arguments_decode_lone_surrogates_to_u_fffd() -> None:
    assert load_arguments('{"q": "\\ud800x", "e": "\\ud83d\\ude00"}') == {"q": "\ufffdx", "e": "😀"}
    assert load_arguments('{"q": "\ud800x"}') == {"q": "\ufffdx"}  # raw, not escaped
    assert load_arguments('{"q": "\\\\ud800"}') == {"q": "\\ud800"}  # an escaped backslash
    text, error = normalize_arguments('{"q": "\\udc00"}')
    assert error is None and load_arguments(text) == {"q": "\ufffd"}


@tool
def search(q: str) -> str:
    """Search for ``q``."""
    return f"found {q}"


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_call_with_a_lone_surrogate_runs(loopback_server, stream) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "search", "arguments": {"q": "\ud800x"}}]}, "done"
    )
    agent = LightAgent(
        name="a", model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=[search]
    )
    if stream:
        events = list(agent.run("find it", stream=True, result_format="event"))
        done = next(e for e in events if e.type == "done").data
        assert not done.get("error"), done
    else:
        result = agent.run("find it", result_format="object")
        assert result.error is None, result.error
        assert result.content == "done"
    tool_message = loopback_server.requests[1]["messages"][-1]
    assert tool_message["content"] == "found \ufffdx"


@pytest.fixture(params=["jsonl", "sqlite"])
def session_store(request, tmp_path):
    if request.param == "jsonl":
        store = JsonlSessionStore(tmp_path / "jsonl")
    else:
        store = SqliteSessionStore(tmp_path / "s.sqlite3")
    yield store
    store.close()


def test_a_user_message_with_a_lone_surrogate_is_sent_and_stored(
    loopback_server, session_store
) -> None:
    loopback_server.reply("first answer", "answer with \ud800 in it", "third")
    agent = LightAgent(
        name="a",
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        session_store=session_store,
    )
    assert agent.run("hello", session_id="s-1", result_format="object").error is None
    before = session_store.events("s-1")
    result = agent.run("and \udc00 this?", session_id="s-1", result_format="object")
    assert result.error is None, result.error
    assert loopback_server.requests[1]["messages"][-1]["content"] == "and \ufffd this?"
    # the next run's history comes back from the store, valid and whole
    assert agent.run("more", session_id="s-1", result_format="object").error is None
    history = [m.get("content") for m in loopback_server.requests[2]["messages"]]
    assert "and \ufffd this?" in history and "answer with \ufffd in it" in history
    after = session_store.events("s-1")
    assert [e.event_id for e in after[: len(before)]] == [e.event_id for e in before]
    text = json.dumps([e.data for e in after], ensure_ascii=False)
    assert "and \ufffd this?" in text
    text.encode("utf-8")


def test_an_owner_with_a_lone_surrogate_is_refused(tmp_path) -> None:
    # Stored as U+FFFD, "ann\ud800" and "ann\udc00" would own each other's sessions.
    from lightagent import ScriptedModel

    store = SqliteSessionStore(tmp_path / "s.sqlite3")
    agent = LightAgent(name="a", model=ScriptedModel(default="hi"), session_store=store)
    with pytest.raises(ValidationError) as info:
        agent.run("q", session_id="s-1", user_id="ann\ud800")
    assert info.value.code == "LA-VALIDATION" and info.value.details["field"] == "user_id"
    assert store.events("s-1") == []
    assert agent.run("q", session_id="s-1", user_id="ann\ufffd") == "hi"  # valid text is fine
