"""The agent's session methods, and a session log that cannot be written stops the run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lightagent import (
    ConfigurationError,
    JsonlTraceExporter,
    LightAgent,
    ScriptedModel,
    SqliteSessionStore,
    tool,
)

CALLS: list[str] = []


@tool
def bump(name: str) -> str:
    """Record a side effect.

    Args:
        name: What to record.
    """
    CALLS.append(name)
    return f"bumped {name}"


def _agent(tmp_path: Path, *replies: Any) -> LightAgent:
    return LightAgent(
        model=ScriptedModel(list(replies)),
        tools=[bump],
        session_store=SqliteSessionStore(tmp_path / "s.sqlite3"),
    )


def test_replay_checkpoint_fork_export(tmp_path: Path) -> None:
    agent = _agent(tmp_path, "first answer", "second answer")
    assert agent.run("one", session_id="s1") == "first answer"
    assert agent.run("two", session_id="s1") == "second answer"
    replay = agent.replay_session("s1")
    assert len(replay.completed_turns) == 2 and replay.incomplete_turns == []
    checkpoint = agent.checkpoint_session("after-two", session_id="s1")
    assert checkpoint.sequence == replay.last_sequence
    forked = agent.fork_session(session_id="s1", through_sequence=checkpoint.sequence)
    assert len(agent.replay_session(forked).completed_turns) == 2
    out = tmp_path / "s1.jsonl"
    assert agent.export_session("s1", out) == len(agent.get_session("s1")) > 0
    assert out.read_text().count("\n") == len(agent.get_session("s1"))


def test_session_methods_need_a_store() -> None:
    agent = LightAgent(model=ScriptedModel([]))
    with pytest.raises(ConfigurationError) as err:
        agent.replay_session("x")
    assert err.value.code == "LA-CONFIG" and "session_store" in err.value.hint


def test_summarize_and_export_last_trace(tmp_path: Path) -> None:
    agent = LightAgent(model=ScriptedModel(["hi"]))
    agent.run("hello", trace=True)
    assert agent.summarize_trace().model_request_count == 1
    report = agent.export_trace_to(JsonlTraceExporter(tmp_path / "t.jsonl"))
    assert not report.failures and (tmp_path / "t.jsonl").exists()


class _BrokenLog:
    """A durable log that fails on the n-th event of a given type."""

    fail_closed = True

    def __init__(self, event_type: str) -> None:
        self.event_type = event_type
        self.seen: list[str] = []

    def on_event(self, run: Any, event: dict[str, Any]) -> None:
        self.seen.append(event["type"])
        if event["type"] == self.event_type:
            raise OSError("disk full")


class _AsyncBrokenLog(_BrokenLog):
    async def aon_event(self, run: Any, event: dict[str, Any]) -> None:
        self.on_event(run, event)


@pytest.mark.parametrize("observer_cls", [_BrokenLog, _AsyncBrokenLog])
def test_a_log_that_misses_a_tool_call_stops_the_run_before_the_tool(observer_cls: type) -> None:
    CALLS.clear()
    log = observer_cls("tool_call")
    agent = LightAgent(
        model=ScriptedModel([{"tool_calls": [{"name": "bump", "arguments": {"name": "x"}}]}]),
        tools=[bump],
        observers=[log],
    )
    if observer_cls is _AsyncBrokenLog:
        result = asyncio.run(agent.arun("go", result_format="object"))
    else:
        result = agent.run("go", result_format="object")
    assert CALLS == [], "the tool ran although its call was never logged"
    assert result.error is not None and result.error["code"] == "LA-SESSION"
    assert log.seen.count("tool_call") == 1  # detached after failing: no retry storm


def test_a_plain_observer_failure_does_not_stop_the_run() -> None:
    class Flaky:
        def on_event(self, run: Any, event: dict[str, Any]) -> None:
            raise OSError("metrics backend down")

    agent = LightAgent(model=ScriptedModel(["fine"]), observers=[Flaky()])
    result = agent.run("go", result_format="object")
    assert result.content == "fine" and result.error is None
