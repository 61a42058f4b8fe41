"""Redaction of planted secrets, fail-closed persistence, schema migrations."""

from __future__ import annotations

import json
import sqlite3

import pytest
from lightagent.errors import StorageError
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.model import SESSION_SCHEMA_VERSION, EventMigrationRegistry, SessionEvent
from lightagent.events.sql_store import SqliteSessionStore
from lightagent.redaction import REDACTION_FAILED, is_secret_key, redact, redact_text

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
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute(
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


# -- fuzz: canaries planted anywhere in random nested structures never survive ----------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_benign = st.text(alphabet="abcdefghij klmnop,.:-_0123", max_size=20)
_keys = st.sampled_from(["content", "args", "note", "x", "items", "output", "meta"])


def _plant(tree, canary, path_choice):
    """Put ``canary`` inside ``tree`` at a position chosen by ``path_choice`` (an int)."""
    if isinstance(tree, dict) and tree:
        keys = sorted(tree)
        key = keys[path_choice % len(keys)]
        tree[key] = _plant(tree[key], canary, path_choice // 7)
        return tree
    if isinstance(tree, list) and tree:
        i = path_choice % len(tree)
        tree[i] = _plant(tree[i], canary, path_choice // 5)
        return tree
    if isinstance(tree, str):
        cut = path_choice % (len(tree) + 1)
        # Secrets in text follow some delimiter; what comes after may touch them.
        before = " ,.:=\"'(\n"[path_choice % 9]
        return f"{tree[:cut]}{before}{canary}{tree[cut:]}"
    return canary


@settings(max_examples=300, deadline=None)
@given(
    tree=st.recursive(
        _benign,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
        max_leaves=8,
    ),
    canary=st.sampled_from(sorted(CANARIES.values())),
    where=st.integers(0, 10_000),
)
def test_fuzz_planted_canaries_never_survive(tree, canary, where):
    planted = _plant(tree, canary, where)
    out = json.dumps(redact({"root": planted}), ensure_ascii=False)
    # PEM blocks and Bearer tokens are matched as a whole; check their secret part.
    secret = canary.split("\n")[1] if canary.startswith("-----BEGIN") else canary.split(" ")[-1]
    assert secret not in out


@pytest.mark.parametrize(
    "text",
    [
        "The risk-assessment-for-q3 document is ready.",
        "We used 1200 prompt tokens and 80 completion tokens.",
        "Our password policy requires twelve characters.",
        "See https://example.com/docs/keys-and-secrets for details.",
        "The keyboard shortcut is Ctrl+K; the monkey ate a banana.",
        "task-0001 depends on desk-reservation-service",
        "Basic arithmetic: 2 + 2 = 4",
    ],
)
def test_benign_text_is_left_alone(text):
    assert redact_text(text) == text
