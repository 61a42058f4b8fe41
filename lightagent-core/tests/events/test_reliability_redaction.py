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

