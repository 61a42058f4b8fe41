"""Goals with acceptance criteria: recorded as events, checked at a run's end (text or a
callable), the outcome on ``run_end`` and in the log, restored from the log by a new agent."""

from __future__ import annotations

import pytest
from lightagent import ConfigurationError, LightAgent, ValidationError
from lightagent.events.sql_store import SqliteSessionStore


def agent_for(server, db) -> LightAgent:
    return LightAgent(
        model="gpt-4.1", api_key="k", base_url=server.base_url, session_store=SqliteSessionStore(db)
    )


def run_end(result) -> dict:
    return next(e["data"] for e in result.trace if e["type"] == "run_end")


def test_a_goal_is_checked_at_run_end_and_restored_by_a_new_agent(
    loopback_server, tmp_path
) -> None:
    db = tmp_path / "s.sqlite3"
    first = agent_for(loopback_server, db)
    goal = first.create_goal(
        "rel", "Prepare the release", acceptance_criteria=["tests pass", "artifacts build"]
    )
    assert goal["status"] == "active"
    loopback_server.reply("The tests pass; building now.")
    result = first.run("status?", session_id="rel", result_format="object", trace=True)
    (outcome,) = run_end(result)["goals"]
    assert outcome["status"] == "active"
    assert (outcome["met"], outcome["unmet"]) == (["tests pass"], ["artifacts build"])

    # a new agent instance (a new store object) restores the open goal from the log
    second = agent_for(loopback_server, db)
    assert [g["goal_id"] for g in second.session_goals("rel")] == [goal["goal_id"]]
    loopback_server.reply("Tests pass and the artifacts build.")
    done = second.run("and now?", session_id="rel", result_format="object", trace=True)
    assert run_end(done)["goals"][0]["status"] == "completed"
    log = second.get_session("rel")
    assert [e.type for e in log if e.type.startswith("goal.")] == [
        "goal.created",
        "goal.updated",
        "goal.completed",
    ]
    # a completed goal is closed: the next run checks nothing
    assert second.session_goals("rel") == []
    loopback_server.reply("ok")
    later = second.run("more?", session_id="rel", result_format="object", trace=True)
    assert "goals" not in run_end(later)


def test_a_callable_criterion_and_a_failed_run_checks_nothing(loopback_server, tmp_path) -> None:
    db = tmp_path / "s.sqlite3"
    agent = agent_for(loopback_server, db)

    def cites_a_number(answer: str) -> bool:
        return any(ch.isdigit() for ch in answer)

    agent.create_goal("g", "Give a figure", acceptance_criteria=[cites_a_number], goal_id="fig")
    loopback_server.reply(loopback_server.error(400))  # a failed run leaves the goal unchecked
    failed = agent.run("how many?", session_id="g", result_format="object", trace=True)
    assert failed.error is not None and "goals" not in run_end(failed)
    loopback_server.reply("About 42.")
    result = agent.run("how many?", session_id="g", result_format="object", trace=True)
    assert run_end(result)["goals"][0]["met"] == [{"check": "cites_a_number"}]
    assert run_end(result)["goals"][0]["status"] == "completed"

    # a new agent that does not know the check: the criterion is unmet, with a note
    agent.create_goal("g2", "Give a figure", acceptance_criteria=[cites_a_number])
    fresh = agent_for(loopback_server, db)
    loopback_server.reply("About 7.")
    out = run_end(fresh.run("n?", session_id="g2", result_format="object", trace=True))["goals"][0]
    assert out["status"] == "active" and "no goal check named" in out["notes"][0]
    fresh.goal_checks["cites_a_number"] = cites_a_number
    loopback_server.reply("About 8.")
    out = run_end(fresh.run("n?", session_id="g2", result_format="object", trace=True))["goals"][0]
    assert out["status"] == "completed"


def test_bad_goals_are_typed(loopback_server, tmp_path) -> None:
    agent = agent_for(loopback_server, tmp_path / "s.sqlite3")
    for bad in ({"objective": " "}, {"objective": "x", "acceptance_criteria": [3]}):
        objective = bad.pop("objective")
        with pytest.raises(ValidationError) as info:
            agent.create_goal("s", objective, **bad)
        assert info.value.code == "LA-VALIDATION" and info.value.hint
    with pytest.raises(ConfigurationError):
        LightAgent(model="gpt-4.1", api_key="k", base_url="http://127.0.0.1:9").create_goal(
            "s", "x"
        )
