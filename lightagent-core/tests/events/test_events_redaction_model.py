"""Redaction of planted secrets, fail-closed persistence, schema migrations."""

from __future__ import annotations

import json

import pytest
from lightagent.errors import StorageError
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.model import SESSION_SCHEMA_VERSION, EventMigrationRegistry, SessionEvent
from lightagent.events.redaction import REDACTION_FAILED, is_secret_key, redact, redact_text
from lightagent.events.sql_store import SqliteSessionStore

CANARIES = {
    "openai": "sk-proj-AbCdEf0123456789GhIjKlMn",
    "github": "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-1234567890-abcdefghijkl",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----",
    "bearer": "Bearer abcdef0123456789.token-value",
}


def _blob(value):
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("name", sorted(CANARIES))
def test_value_patterns_in_nested_structures(name):
    secret = CANARIES[name]
    value = {
        "messages": [{"role": "user", "content": f"context {secret} end"}],
        "deep": [[{"x": (secret,)}]],
        "arguments": json.dumps({"q": secret}),
    }
    out = redact(value)
    assert secret not in _blob(out)
    assert "[redacted]" in out["messages"][0]["content"] and out["messages"][0][
        "content"
    ].startswith("context")


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "openai_api_key",
        "OPENAI_API_KEY",
        "x-api-key",
        "X-Api-Key",
        "Authorization",
        "github_token",
        "access_token",
        "refresh-token",
        "password",
        "db_password",
        "client_secret",
        "credentials",
        "aws_secret_access_key",
        "Cookie",
        "token",
    ],
)
def test_secret_keys_by_pattern(key):
    assert is_secret_key(key)
    assert redact({"outer": {key: "plain but secret"}}) == {"outer": {key: "[redacted]"}}


@pytest.mark.parametrize(
    "key",
    [
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "max_tokens",
        "idempotency_key",
        "keyword",
        "monkey",
        "tokenizer_name",
        "content",
        "call_id",
    ],
)
def test_benign_keys_are_kept(key):
    assert not is_secret_key(key)
    assert redact({key: 12}) == {key: 12}


def test_free_text_assignments_and_url_credentials():
    text = (
        "connect postgresql://app:hunter2pass@db/x with password=letmein123 and api_key: abcd1234"
    )
    out = redact_text(text)
    for secret in ("hunter2pass", "letmein123", "abcd1234"):
        assert secret not in out
    assert "postgresql://app:[redacted]@db/x" in out
    assert redact_text("The answer is 42, no secrets here.") == "The answer is 42, no secrets here."


def test_objects_become_structures_not_reprs():
    class SdkMessage:
        def model_dump(self):
            return {"role": "assistant", "content": "hi", "api_key": "zzz"}

    assert redact({"m": SdkMessage()}) == {
        "m": {"role": "assistant", "content": "hi", "api_key": "[redacted]"}
    }
    assert redact({"b": b"\x00\x01"}) == {"b": {"$bytes": "AAE="}}
    assert redact({"f": float("nan")}) == {"f": "nan"}


def test_redaction_fails_closed_in_stores(tmp_path):
    class Hostile:
        def to_dict(self):
            raise RuntimeError("no")

    for store in (InMemorySessionStore(), SqliteSessionStore(tmp_path / "s.db")):
        (event,) = store.append(
            "s", [{"type": "a.b", "data": {"obj": Hostile(), "secret_value": "x"}}]
        )
        assert event.data == {"redaction": REDACTION_FAILED}
        assert store.events("s")[0].data == {"redaction": REDACTION_FAILED}


def test_v0_event_is_read_back_upgraded(tmp_path):
    v0 = {
        "kind": "tool.completed",
        "seq": 1,
        "payload": {"call_id": "c1"},
        "ts": 12.5,
        "run_id": "r1",
    }
    event = SessionEvent.from_dict(v0)
    assert event.schema_version == SESSION_SCHEMA_VERSION
    assert (event.type, event.sequence, event.data, event.timestamp) == (
        "tool.completed",
        1,
        {"call_id": "c1"},
        12.5,
    )
    assert event.turn_id == "r1" and event.event_id
    # Through a real store: a v0 row stored by an old version is upgraded on read.
    store = SqliteSessionStore(tmp_path / "s.db")
    store.append("s", [{"type": "a.b"}])
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            "UPDATE session_events SET payload = ? WHERE sequence = 1",
            (json.dumps({"kind": "a.b", "seq": 1, "payload": {"old": True}, "session_id": "s"}),),
        )
    (read,) = store.events("s")
    assert read.data == {"old": True} and read.schema_version == SESSION_SCHEMA_VERSION


def test_migration_registry_steps_and_errors():
    registry = EventMigrationRegistry(current=3)
    registry.register(0, lambda raw: {**raw, "a": 1})

    @registry.register(1)
    def step(raw):
        return {**raw, "b": 2}

    with pytest.raises(StorageError):  # no step from 2
        registry.upgrade({"schema_version": 0})
    registry.register(2, lambda raw: raw)
    assert registry.upgrade({"schema_version": 0}) == {"schema_version": 3, "a": 1, "b": 2}
    with pytest.raises(StorageError) as newer:
        registry.upgrade({"schema_version": 9})
    assert "Upgrade lightagent-core" in newer.value.hint
    with pytest.raises(StorageError):
        registry.upgrade({"schema_version": "x"})
