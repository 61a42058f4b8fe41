"""Providers resolved by name take configuration; a missing or bad key is a typed LA-CONFIG
naming the provider and the key (never a bare TypeError)."""

from __future__ import annotations

import pytest
from lightagent import LightAgent, LightAgentError, ScriptedModel
from lightagent.events.sql_store import SqlSessionStore


def _run_with_store(store, **kw):
    agent = LightAgent(model=ScriptedModel(["ok"]), session_store=store)
    return agent, agent.run("x", session_id="s1", **kw)


def test_the_bare_type_error_is_gone():
    with pytest.raises(LightAgentError) as info:
        LightAgent(model=ScriptedModel(["ok"]), session_store="sql").run("x", session_id="s1")
    error = info.value
    assert error.code == "LA-CONFIG"
    assert "'sql'" in error.message and "'url'" in error.message
    assert error.details["provider"] == "sql" and error.details["missing"] == ["url"]
    assert "sqlite:///" in error.hint


@pytest.mark.parametrize(
    "form",
    [
        "url",
        "tuple",
        "dict",
    ],
)
def test_each_configuration_form_builds_the_store(tmp_path, form):
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    spec = {"url": url, "tuple": ("sql", {"url": url}), "dict": {"provider": "sql", "url": url}}[
        form
    ]
    agent, answer = _run_with_store(spec)
    assert answer == "ok"
    store = agent.session_binding.store
    assert isinstance(store, SqlSessionStore)
    assert [e.type for e in agent.get_session("s1")][:2] == ["session.started", "turn.started"]
    store.close()

    store.close()


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        (("sql", {"url": "sqlite:///x.db", "colour": "red"}), "'colour'"),
        (("memory", {"path": "x"}), "'path'"),
        ("mysql://db/x", "mysql://"),
        ("nope", "'nope'"),
        (("sql", {"url": "not a url"}), "URL"),
    ],
)
def test_bad_configuration_is_named(spec, needle):
    with pytest.raises(LightAgentError) as info:
        _run_with_store(spec)
    assert info.value.code == "LA-CONFIG"
    assert needle in info.value.message


def test_model_takes_configuration_too(loopback_server):
    loopback_server.reply("configured")
    agent = LightAgent(
        model=("openai", {"model": "m1", "base_url": loopback_server.base_url, "api_key": "k"})
    )
    assert agent.run("x") == "configured"
    assert loopback_server.requests[0]["model"] == "m1"
    scripted = LightAgent(model={"provider": "scripted", "model": "named"})
    assert scripted.model.name == "named"
    with pytest.raises(LightAgentError) as info:
        LightAgent(model=("openai", {"model": "m", "colour": "red"})).run("x")
    assert info.value.code == "LA-CONFIG" and "'colour'" in info.value.message
