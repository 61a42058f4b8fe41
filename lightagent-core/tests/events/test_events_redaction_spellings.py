"""Credential keys are recognised whatever their case and separators.

``accessToken``, ``access_token``, ``access-token``, ``ACCESS_TOKEN`` and ``access.token``
name the same credential; a tool's camelCase arguments must not reach the SQLite rows or
an export in clear.
"""

from __future__ import annotations

import sqlite3

from hypothesis import given
from hypothesis import strategies as st
from lightagent import LightAgent, SqliteSessionStore, tool
from lightagent.redaction import REDACTED, is_secret_key, redact
from lightagent_contracts.loopback import LoopbackServer

SECRET_NAMES = [
    ("access", "token"),
    ("refresh", "token"),
    ("id", "token"),
    ("auth", "token"),
    ("session", "token"),
    ("bearer", "token"),
    ("client", "secret"),
    ("secret", "key"),
    ("api", "key"),
    ("openai", "api", "key"),
    ("access", "key"),
    ("private", "key"),
    ("session", "key"),
    ("db", "password"),
    ("pass", "phrase"),
    ("aws", "secret", "access", "key"),
]
BENIGN_NAMES = [
    ("prompt", "tokens"),
    ("completion", "tokens"),
    ("total", "tokens"),
    ("max", "tokens"),
    ("idempotency", "key"),
    ("token", "count"),
    ("tokenizer", "name"),
    ("call", "id"),
    ("key", "word"),
    ("monkey",),
]
SEPARATORS = ["_", "-", ".", "", " ", "__"]


def _case(word: str, style: str, first: bool, flips: list[bool]) -> str:
    if style == "lower":
        return word.lower()
    if style == "upper":
        return word.upper()
    if style == "camel":
        return word if first else word.capitalize()
    if style == "pascal":
        return word.capitalize()
    # random case, letter by letter
    return "".join(c.upper() if flips[i % len(flips)] else c for i, c in enumerate(word))


@st.composite
def spellings(draw, names, styles=("lower", "upper", "camel", "pascal", "random")):
    words = draw(st.sampled_from(names))
    style = draw(st.sampled_from(styles))
    separator = "" if style in ("camel", "pascal") else draw(st.sampled_from(SEPARATORS))
    flips = draw(st.lists(st.booleans(), min_size=1, max_size=8))
    cased = [_case(w, style, i == 0, flips) for i, w in enumerate(words)]
    prefix = draw(st.sampled_from(["", "user_", "x-", "oauth."]))
    return prefix + separator.join(cased)


@given(spellings(SECRET_NAMES))
def test_every_spelling_of_a_credential_key_is_redacted(key):
    assert is_secret_key(key), key
    assert redact({"args": {key: "plain-value-1234"}}) == {"args": {key: REDACTED}}


# Letter-by-letter random case is left out here: it can cut "tokenizer" into words such
# as "token_iz_er", and redacting a harmless key is the safe mistake to make.
@given(spellings(BENIGN_NAMES, styles=("lower", "upper", "camel", "pascal")))
def test_no_spelling_of_a_usage_counter_or_plain_key_is_redacted(key):
    assert not is_secret_key(key), key
    assert redact({key: 12}) == {key: 12}


PLANTED = {
    "accessToken": "AT-PLANTED-1111aaaa",
    "refreshToken": "RT-PLANTED-2222bbbb",
    "idToken": "IT-PLANTED-3333cccc",
    "authToken": "AU-PLANTED-4444dddd",
    "clientSecret": "CS-PLANTED-5555eeee",
    "apiKey": "AK-PLANTED-6666ffff",
}


# The parameters keep the providers' camelCase spelling on purpose.
@tool
def sign_in(
    accessToken: str,
    refreshToken: str,
    idToken: str,
    authToken: str,
    clientSecret: str,
    apiKey: str,
) -> str:
    """Sign in to the account service."""
    return "signed in"


def test_camel_case_tool_arguments_never_reach_sqlite_rows_or_exports(tmp_path):
    path = tmp_path / "s.db"
    with LoopbackServer() as server:
        server.reply({"tool_calls": [{"name": "sign_in", "arguments": PLANTED}]}, "done")
        agent = LightAgent(
            model="m",
            base_url=server.base_url,
            api_key="k",
            tools=[sign_in],
            session_store=SqliteSessionStore(path),
        )
        assert agent.run("sign me in", session_id="s") == "done"
        server.assert_exhausted()
    # The tool got the real values (redaction is for what is stored, not for the call).
    assert server.requests[1]["messages"][-1]["content"] == "signed in"
    with sqlite3.connect(path) as db:
        rows = [payload for (payload,) in db.execute("SELECT payload FROM session_events")]
    assert any("tool.requested" in row for row in rows)
    export = tmp_path / "s.jsonl"
    assert agent.export_session("s", export) == len(rows)
    for text in ("\n".join(rows), export.read_text()):
        for name, value in PLANTED.items():
            assert value not in text, name
    requested = next(e for e in agent.get_session("s") if e.type == "tool.requested")
    assert requested.data["arguments"] == dict.fromkeys(PLANTED, REDACTED)
