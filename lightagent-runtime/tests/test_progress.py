"""Repeated-call / no-progress detection in the loop, against the loopback OpenAI-wire server."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import ConfigurationError, LightAgent, ProgressPolicy
from lightagent.events.sql_store import SqliteSessionStore

RUNS: list[str] = []


def status(job: str) -> str:
    """The status of `job`."""
    RUNS.append(job)
    return "pending"


def counter(job: str) -> str:
    """A new answer every time."""
    RUNS.append(job)
    return f"step {len(RUNS)}"


def agent_for(server, **kw) -> LightAgent:
    return LightAgent(model="gpt-4.1", api_key="k", base_url=server.base_url, **kw)


def poll(tool: str = "status", job: str = "42", spaced: bool = False) -> dict:
    arguments = f'{{ "job" : "{job}" }}' if spaced else {"job": job}
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def test_same_call_same_result_stops_the_run_typed(loopback_server) -> None:
    RUNS.clear()
    loopback_server.reply(poll(), poll(spaced=True), poll())  # a fourth request never goes out
    agent = agent_for(
        loopback_server, tools=[status], progress_policy=ProgressPolicy(max_repeated_tool_calls=3)
    )
    result = agent.run("is job 42 done?", result_format="object", trace=True)
    assert result.error["code"] == "LA-NO-PROGRESS"
    details = result.error["details"]
    assert details["exit_reason"] == "repeated_tool_call"
    assert (details["tool"], details["count"]) == ("status", 3)
    assert len(RUNS) == 3 and len(loopback_server.requests) == 3
    stalled = [e["data"] for e in result.trace if e["type"] == "progress_stalled"]
    assert len(stalled) == 1
    assert (stalled[0]["reason"], stalled[0]["count"], stalled[0]["action"]) == (
        "repeated_tool_call",
        3,
        "stop",
    )
    end = next(e["data"] for e in result.trace if e["type"] == "run_end")
    assert end["exit_reason"] == "repeated_tool_call"


def test_new_information_is_progress(loopback_server) -> None:
    RUNS.clear()
    loopback_server.reply(poll("counter"), poll("counter"), poll("counter"), "done")
    agent = agent_for(loopback_server, tools=[counter], progress_policy=True)
    assert agent.run("count") == "done"
    assert len(RUNS) == 3


def test_redirect_tells_the_model_once_then_stops(loopback_server) -> None:
    RUNS.clear()
    loopback_server.reply(poll(), poll(), "I will wait.")
    policy = ProgressPolicy(max_repeated_tool_calls=2, action="redirect")
    agent = agent_for(loopback_server, tools=[status], progress_policy=policy)
    assert agent.run("is job 42 done?") == "I will wait."
    note = loopback_server.requests[2]["messages"][-1]
    assert note["role"] == "user" and "will not give new information" in note["content"]
    # the note comes after the tool result, never between a call and its result
    assert loopback_server.requests[2]["messages"][-2]["role"] == "tool"
    loopback_server.reply(poll(), poll(), poll())
    result = agent.run("again", result_format="object")
    assert result.error["code"] == "LA-NO-PROGRESS"  # redirected once, then stopped


def test_rounds_without_anything_new_stop_the_run(loopback_server) -> None:
    RUNS.clear()
    two = {
        "tool_calls": [
            {"name": "status", "arguments": {"job": "1"}},
            {"name": "status", "arguments": {"job": "2"}},
        ]
    }
    one = poll(job="1")
    two_b = poll(job="2")
    loopback_server.reply(two, one, two_b)
    policy = ProgressPolicy(max_repeated_tool_calls=5, max_unchanged_steps=2)
    agent = agent_for(loopback_server, tools=[status], progress_policy=policy)
    result = asyncio.run(agent.arun("jobs?", result_format="object"))
    assert result.error["details"]["exit_reason"] == "no_progress"
    assert result.error["details"]["steps"] == 2


def test_per_run_policy_and_session_log(loopback_server, tmp_path) -> None:
    loopback_server.reply(poll(), poll())
    agent = agent_for(
        loopback_server, tools=[status], session_store=SqliteSessionStore(tmp_path / "p.db")
    )
    result = agent.run(
        "q", session_id="s", result_format="object", progress_policy={"max_repeated_tool_calls": 2}
    )
    assert result.error["code"] == "LA-NO-PROGRESS"
    types = [e.type for e in SqliteSessionStore(tmp_path / "p.db").events("s")]
    assert "progress.stalled" in types


@pytest.mark.parametrize("value", [ProgressPolicy, {"max_repeats": 2}, "yes", 3])
def test_bad_policy_is_a_config_error(value) -> None:
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model="gpt-4.1", api_key="k", progress_policy=value)
    assert info.value.code == "LA-CONFIG" and info.value.hint


@pytest.mark.parametrize(
    "kwargs", [{"max_repeated_tool_calls": 1}, {"max_unchanged_steps": True}, {"action": "warn"}]
)
def test_bad_policy_fields(kwargs) -> None:
    with pytest.raises(ConfigurationError):
        ProgressPolicy(**kwargs)
