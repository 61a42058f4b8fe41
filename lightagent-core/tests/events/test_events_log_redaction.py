"""Log lines are redacted too: the openai SDK's DEBUG request logs included."""

from __future__ import annotations

import contextlib
import io
import logging

from lightagent import LightAgent, RedactingFilter, install_log_redaction, tool
from lightagent_contracts.loopback import LoopbackServer

SECRET = "sk-proj-PLANTEDsecret0123456789abcdefXYZ"


@tool
def lookup(token: str) -> str:
    """Look something up.

    Args:
        token: An access token.
    """
    raise ValueError(f"token {token} was refused")


def test_openai_debug_logs_are_redacted_through_the_handler() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        assert install_log_redaction() and install_log_redaction()  # idempotent
        assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
        with LoopbackServer() as server:
            server.reply(
                {"tool_calls": [{"name": "lookup", "arguments": {"token": SECRET}}]}, "done"
            )
            agent = LightAgent(
                model="m",
                base_url=server.base_url,
                api_key="sk-live-APIKEY0123456789abcdef",
                tools=[lookup],
            )
            assert agent.run("go") == "done"
        # openai 2.x logs each request's options (the tool arguments among them) at DEBUG;
        # 3.x logs less. The line 2.x writes, on the SDK's own logger, whatever the version:
        logging.getLogger("openai._base_client").debug(
            "Request options: %s", {"json_data": {"arguments": {"token": SECRET}}}
        )
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    text = stream.getvalue()
    assert "openai" in text or "httpx" in text, (
        "the SDK logged nothing at DEBUG: the test would prove nothing"
    )
    assert SECRET not in text
    assert "APIKEY0123456789" not in text
    assert "[redacted]" in text


def test_agent_log_file_is_redacted(tmp_path) -> None:
    path = tmp_path / "agent.log"
    agent = LightAgent(model="m", base_url="http://127.0.0.1:9/v1", log_file=str(path))
    agent.logger.warning("calling with key %s", SECRET)
    for handler in agent.logger.handlers:
        handler.flush()
    text = path.read_text()
    assert SECRET not in text and "[redacted]" in text


def test_a_filter_that_cannot_redact_fails_closed() -> None:
    class Boom:
        def __str__(self) -> str:
            raise RuntimeError("cannot render")

    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%s", (Boom(),), None)
    RedactingFilter().filter(record)
    assert record.getMessage() == "[redaction-failed]"


def test_a_lone_surrogate_in_a_log_line_is_written_as_u_fffd(tmp_path) -> None:
    path = tmp_path / "run.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("lightagent.test.surrogates")
    logger.addHandler(handler)
    logger.propagate = False
    errors = io.StringIO()
    raise_exceptions, logging.raiseExceptions = logging.raiseExceptions, True
    try:
        with contextlib.redirect_stderr(errors):
            try:
                raise ValueError("bad \udc00 value")
            except ValueError:
                logger.exception("query %s failed", "a\ud800b")
    finally:
        logging.raiseExceptions = raise_exceptions
        logger.removeHandler(handler)
        handler.close()
    assert "Logging error" not in errors.getvalue()
    text = path.read_text(encoding="utf-8")
    assert "query a\ufffdb failed" in text and "bad \ufffd value" in text
