"""Bar: a secret planted in a tool argument, in a tool error message and the API key never appears
in an exported trace, an event-store row, a review-store row or a log line."""

from __future__ import annotations

import logging
import sqlite3

from lightagent import (
    HumanApprovalHook,
    LightAgent,
    PolicyHook,
    SqliteSessionStore,
    SqlReviewStore,
    tool,
)
from lightagent.events.trace import ExportingObserver, JsonlTraceExporter, export_trace

API_KEY = "sk-live-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
ARG_SECRET = "sk-proj-" + "ArgSecretValue0123456789"
ERR_SECRET = "ghp_" + "ErrorSecret0123456789abcdefghij"
SECRETS = (API_KEY, ARG_SECRET, ERR_SECRET)


@tool
def login(user: str, password: str) -> str:
    """Log a user in."""
    raise ValueError(f"auth failed for token {ERR_SECRET}")


@tool
def rotate(user: str, password: str) -> str:
    """Rotate a password (needs approval)."""
    return "rotated"


def _leaks(text: str) -> list[str]:
    return [s[:12] for s in SECRETS if s in text]


def test_secrets_never_reach_exports_stores_or_logs(loopback_server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    loopback_server.reply(
        {"tool_calls": [{"name": "login", "arguments": {"user": "ann", "password": ARG_SECRET}}]},
        {"tool_calls": [{"name": "rotate", "arguments": {"user": "ann", "password": ARG_SECRET}}]},
        "done",
    )

    def noisy_hook(ctx):
        if ctx.phase == "before_tool_call":
            raise RuntimeError(f"hook saw {ARG_SECRET}")  # a failing plain hook is traced
        return None

    sessions = tmp_path / "sessions.sqlite3"
    reviews = SqlReviewStore(f"sqlite:///{tmp_path / 'reviews.sqlite3'}")
    exported = tmp_path / "trace.jsonl"
    agent = LightAgent(
        model="gpt-test",
        api_key=API_KEY,
        base_url=loopback_server.base_url,
        tools=[login, rotate],
        hooks=[
            noisy_hook,
            PolicyHook(lambda c: None),
            HumanApprovalHook(store=reviews, tools={"rotate"}),
        ],
        session_store=SqliteSessionStore(sessions),
        observers=[ExportingObserver([JsonlTraceExporter(exported)])],
    )
    result = agent.run("log me in", trace=True, session_id="s1", result_format="object")
    assert result.content == "done"
    # The planted values really went through the run (so the checks below can fail) …
    raw = str(result.trace)
    assert ARG_SECRET in raw and ERR_SECRET in raw
    assert any(API_KEY in str(h) for h in loopback_server.headers)  # the key was really used
    # … and never reached anything that is persisted, exported or logged.
    hook_events = [e["data"] for e in result.trace if e["type"] == "hook_decision"]
    assert any(d.get("action") == "error" for d in hook_events) and _leaks(str(hook_events)) == []
    assert _leaks(exported.read_text()) == []
    second = tmp_path / "again.jsonl"
    export_trace(result.trace, JsonlTraceExporter(second))
    assert _leaks(second.read_text()) == []
    for db in (sessions, tmp_path / "reviews.sqlite3"):
        with sqlite3.connect(db) as conn:
            tables = [
                r[0] for r in conn.execute("select name from sqlite_master where type='table'")
            ]
            dump = "\n".join(str(conn.execute(f'select * from "{t}"').fetchall()) for t in tables)
        assert dump, db
        assert _leaks(dump) == [], db
    assert reviews.list_pending()[0].tool_name == "rotate"  # the review row exists, redacted
    ours = [r for r in caplog.records if r.name.startswith("lightagent")]
    assert _leaks(str([(r.getMessage(), r.__dict__) for r in ours])) == []
    # The API key is in no log line at all, not even the HTTP stack's DEBUG output. (The
    # openai SDK's own DEBUG log prints request bodies, i.e. the tool arguments the model
    # sent; see test_default_log_level_shows_no_secret.)
    assert API_KEY not in caplog.text


def test_default_log_level_shows_no_secret(loopback_server, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    loopback_server.reply(
        {"tool_calls": [{"name": "login", "arguments": {"user": "ann", "password": ARG_SECRET}}]},
        "done",
    )
    agent = LightAgent(
        model="gpt-test", api_key=API_KEY, base_url=loopback_server.base_url, tools=[login]
    )
    assert agent.run("log me in") == "done"
    assert _leaks(caplog.text) == []


def test_approval_events_carry_digests_not_values():
    reviews_hook = HumanApprovalHook(tools={"rotate"})
    from lightagent import ScriptedModel

    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "rotate", "arguments": {"user": "ann", "password": ARG_SECRET}}
                ]
            },
            "ok",
        ]
    )
    result = LightAgent(model=model, tools=[rotate], hooks=[reviews_hook]).run(
        "rotate", trace=True, result_format="object"
    )
    approval_events = [e for e in result.trace if e["type"].startswith("approval_")]
    assert approval_events and _leaks(str(approval_events)) == []
    assert reviews_hook.store.list_pending()[0].arguments["password"] != ARG_SECRET
