"""Reliability: secrets inside exceptions and tracebacks never reach a log sink.

The redacting filter runs before the handler formats the record. At that point the
traceback text does not exist yet (the formatter builds it from ``exc_info`` later), so
a filter that only rewrites ``exc_text`` lets an exception message carrying a key go out
untouched. Both the agent's own log file and a handler guarded by
``install_log_redaction`` are checked, with the key in the exception message, in a
chained cause, and in ``stack_info``.
"""

from __future__ import annotations

import io
import logging

import pytest
from lightagent import LightAgent, install_log_redaction

SECRET = "sk-proj-PLANTEDsecret0123456789abcdefXYZ"


def _log_failure(logger: logging.Logger, how: str) -> None:
    if how == "stack":
        # The stack shows source lines: this one carries the key as a literal.
        logger.warning("checkpoint", stack_info=True)  # sk-proj-PLANTEDsecret0123456789abcdefXYZ
        return
    try:
        try:
            raise ConnectionError(f"upstream refused key {SECRET}")
        except ConnectionError as inner:
            if how == "chained":
                raise RuntimeError("the tool failed") from inner
            raise
    except Exception:
        logger.exception("tool call failed")


@pytest.mark.parametrize("how", ["message", "chained", "stack"])
def test_a_guarded_handler_never_shows_a_key_from_a_traceback(how):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger(f"lightagent.test.redaction.{how}")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        install_log_redaction([handler])
        _log_failure(logger, how)
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert ("Traceback" in text) or ("Stack" in text), text  # the trace really was logged
    assert SECRET not in text, text
    assert "[redacted]" in text


def test_the_agent_log_file_never_shows_a_key_from_a_traceback(tmp_path):
    path = tmp_path / "agent.log"
    agent = LightAgent(model="m", base_url="http://127.0.0.1:9/v1", log_file=str(path))
    _log_failure(agent.logger, "chained")
    for handler in agent.logger.handlers:
        handler.flush()
    text = path.read_text()
    assert "Traceback" in text and SECRET not in text, text


# -- encoded and vendor-specific forms, through a real store ------------------------------

_AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY"


def _url(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


ENCODED = {
    "url-encoded json": _url(f'{{"api_key": "{SECRET}"}}'),
    "url-encoded query": f"https://cb.example.test/done?state=1&key%3D{SECRET}",
    "url-encoded quote": f"q=%22{SECRET}%22",
    "url-encoded password": _url('{"password": "PLANTEDhunter2x"}'),
    "aws env line": f"aws_secret_access_key={_AWS}",
    "aws upper": f"AWS_SECRET_ACCESS_KEY: {_AWS}",
    "private key assignment": "private_key=PLANTEDabcdef0123456",
}


@pytest.mark.parametrize("name", sorted(ENCODED))
def test_encoded_and_vendor_forms_never_reach_the_session_log(tmp_path, name):
    from lightagent.events.sql_store import SqliteSessionStore

    store = SqliteSessionStore(tmp_path / "s.db")
    store.append("s", [{"type": "tool.completed", "data": {"output": f"got {ENCODED[name]} ok"}}])
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    for planted in (SECRET, _AWS, "PLANTED"):
        assert planted.encode() not in raw, (name, planted)


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=4096 and 1200 prompt tokens",
        "see %20sk-learn docs at https://example.test/a%20b",
        "the keyboard key%3Dvalue is a placeholder",
    ],
)
def test_encoded_benign_text_is_left_alone(text):
    from lightagent.redaction import redact_text

    assert redact_text(text) == text
