"""Issue 28, item 9: a provider's context-overflow error is recovered once, by compacting."""

from __future__ import annotations

from typing import Any

from lightagent import ContextCompactor, LightAgent

OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 128 tokens. However, your messages "
        "resulted in 900 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


def agent_with_history(server: Any) -> tuple[LightAgent, list[dict[str, Any]]]:
    history = []
    for i in range(6):
        history.append({"role": "user", "content": f"question {i}: " + "words " * 60})
        history.append({"role": "assistant", "content": f"answer {i}: " + "more " * 60})
    # any runtime setting brings the recovery; a compactor alone acts only on an overflow
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=server.base_url, context_compactor=ContextCompactor()
    )
    return agent, history


def test_an_overflow_is_compacted_and_asked_again_once(loopback_server) -> None:
    agent, history = agent_with_history(loopback_server)
    loopback_server.reply(loopback_server.error(400, OVERFLOW))
    loopback_server.reply("An earlier summary.")  # the compaction's summary request
    loopback_server.reply("The answer.")
    result = agent.run("And now?", history=history, result_format="object", trace=True)
    assert result.error is None and result.content == "The answer."
    first, _summary, retry = loopback_server.requests
    assert len(retry["messages"]) < len(first["messages"])
    assert any("An earlier summary." in str(m.get("content")) for m in retry["messages"])
    assert retry["messages"][-1] == {"role": "user", "content": "And now?"}
    kinds = [e["type"] for e in result.trace]
    assert kinds.index("context_overflow") < kinds.index("context_compacted")
    overflow = next(e["data"] for e in result.trace if e["type"] == "context_overflow")
    assert overflow["code"] == "LA-400" and overflow["tokens_before"] > overflow["target_tokens"]


def test_a_second_overflow_is_a_typed_error(loopback_server) -> None:
    agent, history = agent_with_history(loopback_server)
    loopback_server.reply(loopback_server.error(400, OVERFLOW))
    loopback_server.reply("An earlier summary.")
    loopback_server.reply(loopback_server.error(400, OVERFLOW))
    result = agent.run("And now?", history=history, result_format="object")
    assert result.error is not None and result.error["code"] == "LA-CONTEXT-OVERFLOW"
    assert len(loopback_server.requests) == 3, "one retry, no more"


def test_other_request_errors_are_not_retried(loopback_server) -> None:
    agent, history = agent_with_history(loopback_server)
    loopback_server.reply(loopback_server.error(400))
    result = agent.run("And now?", history=history, result_format="object")
    assert result.error["code"] == "LA-400" and len(loopback_server.requests) == 1
