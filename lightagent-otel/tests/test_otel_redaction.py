"""Span status, exception events and span-event fields pass the event log's redaction, with
content capture off: an error that quotes a credential never reaches the tracing backend."""

from __future__ import annotations

from lightagent import HookDecision, LightAgent, tool
from opentelemetry.trace import StatusCode

BEARER = "sk-live0123456789abcdefXYZ"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
SECRETS = (BEARER, GITHUB, "hunter2secret")


@tool
def login(user: str) -> str:
    """Log in (fails, quoting what it was given)."""
    raise RuntimeError(
        f"login failed for {user}: password=hunter2secret token {GITHUB} "
        f"(Authorization: Bearer {BEARER})"
    )


def agent_for(server, **kw) -> LightAgent:
    agent = LightAgent(name="calc", model="gpt-4.1", api_key="k", base_url=server.base_url, **kw)
    agent.model.max_retry = 0
    return agent


def _texts(span) -> list[str]:
    texts = [span.status.description or ""]
    for event in span.events:
        texts += [str(v) for v in event.attributes.values()]
    texts += [str(v) for v in span.attributes.values()]
    return texts


def _clean(span) -> None:
    for text in _texts(span):
        for secret in SECRETS:
            assert secret not in text, (span.name, text)


def test_a_tool_error_s_credentials_are_redacted_on_its_span(loopback_server, traced) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "login", "arguments": {"user": "ann"}}]}, "could not log in"
    )
    assert agent_for(loopback_server, tools=[login]).run("log me in") == "could not log in"
    span = traced.one("execute_tool login")
    assert span.status.status_code is StatusCode.ERROR
    [exception] = [e for e in span.events if e.name == "exception"]
    message = exception.attributes["exception.message"]
    assert "password=[redacted]" in message and "Bearer [redacted]" in message
    assert "login failed for ann" in message  # the rest of the text stays
    assert "[redacted]" in span.status.description
    for each in traced.spans():
        _clean(each)


def test_a_model_error_s_credentials_are_redacted_on_chat_and_run_spans(
    loopback_server, traced
) -> None:
    message = f"bad request header Authorization: Bearer {BEARER}; password=hunter2secret"
    loopback_server.default = loopback_server.error(
        400, {"error": {"message": message, "type": "invalid_request_error", "code": "x"}}
    )
    result = agent_for(loopback_server).run("hi", result_format="object")
    assert result.error["code"] == "LA-400"
    chat, run = traced.one("chat "), traced.one("invoke_agent calc")
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert "Bearer [redacted]" in span.status.description
        [exception] = [e for e in span.events if e.name == "exception"]
        assert "Bearer [redacted]" in exception.attributes["exception.message"]
        _clean(span)


def test_span_event_fields_are_redacted(loopback_server, traced) -> None:
    def block(ctx):
        if ctx.phase == "before_tool_call":
            return HookDecision.block(
                f"refused: the arguments hold password=hunter2secret {GITHUB}"
            )
        return None

    loopback_server.reply(
        {"tool_calls": [{"name": "login", "arguments": {"user": "ann"}}]}, "blocked"
    )
    agent_for(loopback_server, tools=[login], hooks=[block]).run("log me in")
    run = traced.one("invoke_agent calc")
    blocks = [e for e in run.events if e.name == "hook_block"]
    assert blocks, [e.name for e in run.events]
    assert "password=[redacted]" in blocks[0].attributes["lightagent.reason"]
    for each in traced.spans():
        _clean(each)
