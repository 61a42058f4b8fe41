"""The loop with the real control (hooks, guardrails) and session (SessionBinding) parts."""

from __future__ import annotations

import asyncio

import pytest
from lightagent import LightAgent, ScriptedModel, tool

hooks_mod = pytest.importorskip("lightagent.hooks")
pytest.importorskip("lightagent_control.interceptor")


@tool
def wire_money(amount: int) -> str:
    """Send money."""
    raise AssertionError("must never run")


def test_hook_blocks_one_tool_call() -> None:
    def no_wires(ctx):
        if ctx.phase == "before_tool_call" and ctx.payload["tool_name"] == "wire_money":
            return hooks_mod.HookDecision.block("wires need a human")
        return None

    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "wire_money", "arguments": {"amount": 5}}]},
            "I cannot wire money.",
        ]
    )
    agent = LightAgent(model=model, tools=[wire_money], hooks=[no_wires])
    result = agent.run("send 5", result_format="object", trace=True)
    assert result.content == "I cannot wire money."
    assert "wires need a human" in result.tool_calls[0]["output"]
    assert any(e["type"] == "hook_decision" for e in result.trace)


def test_input_guardrail_blocks_before_any_model_call() -> None:
    model = ScriptedModel(["never"])
    agent = LightAgent(
        model=model, input_guardrails=[lambda q: "no passwords" if "password" in q else None]
    )
    result = agent.run("my password is hunter2", result_format="object", trace=True)
    assert result.error["code"] == "LA-GUARDRAIL"
    assert model.requests == []
    assert "guardrail_block" in [e["type"] for e in result.trace]


def redact(text, ctx=None):
    if text and "4111" in text:
        return {"allowed": True, "value": text.replace("4111", "****")}
    return None


def test_output_guardrail_redacts_and_the_stream_never_shows_the_secret() -> None:
    answer = "Your card number is 4111 and it expires soon. Anything else?"
    model = ScriptedModel([answer, answer], chunk_size=3)
    agent = LightAgent(model=model, output_guardrails=[redact])
    assert agent.run("card?") == answer.replace("4111", "****")
    shown = ""
    for chunk in agent.run("card?", stream=True):
        shown += chunk["choices"][0]["delta"].get("content") or ""
    assert "4111" not in shown
    assert shown == answer.replace("4111", "****")


def test_output_guardrail_block_shows_nothing_of_the_answer() -> None:
    model = ScriptedModel(["the launch codes are 0000"])
    agent = LightAgent(
        model=model,
        output_guardrails=[lambda text: "no launch codes" if "launch" in text else None],
    )
    items = list(agent.run("codes?", stream=True))
    shown = "".join(i["choices"][0]["delta"].get("content") or "" for i in items if "choices" in i)
    assert "0000" not in shown
    assert items[-1]["code"] == "LA-GUARDRAIL"


def test_session_store_carries_history_between_runs() -> None:
    events = pytest.importorskip("lightagent.events.memory_store")
    store = events.InMemorySessionStore()
    model = ScriptedModel(["Nice to meet you, Ada.", "Your name is Ada."])
    agent = LightAgent(model=model, session_store=store)
    agent.run("My name is Ada.", session_id="s-1")
    assert agent.run("What is my name?", session_id="s-1") == "Your name is Ada."
    sent = model.requests[1].messages
    contents = [m.get("content") for m in sent]
    assert contents[-3:] == ["My name is Ada.", "Nice to meet you, Ada.", "What is my name?"]
    assert sum(1 for m in sent if m["role"] == "system") == 1


def test_async_session_runs_do_not_mix() -> None:
    events = pytest.importorskip("lightagent.events.memory_store")
    store = events.InMemorySessionStore()

    def reply(request):
        return "echo: " + " | ".join(m["content"] for m in request.messages if m["role"] == "user")

    agent = LightAgent(model=ScriptedModel(reply), session_store=store)

    async def conversation(i: int) -> str:
        await agent.arun(f"hello from {i}", session_id=f"s-{i}")
        return await agent.arun(f"again {i}", session_id=f"s-{i}")

    async def main():
        return await asyncio.gather(*(conversation(i) for i in range(10)))

    for i, answer in enumerate(asyncio.run(main())):
        assert answer == f"echo: hello from {i} | again {i}"


def test_session_store_by_registered_name() -> None:
    model = ScriptedModel(["first", "second"])
    agent = LightAgent(model=model, session_store="memory")
    agent.run("one", session_id="named-1")
    agent.run("two", session_id="named-1")
    assert [m["content"] for m in model.requests[1].messages if m["role"] == "user"] == [
        "one",
        "two",
    ]


def test_unknown_session_store_name_is_a_config_error() -> None:
    from lightagent import ConfigurationError

    agent = LightAgent(model=ScriptedModel(["x"]), session_store="no-such-store")
    with pytest.raises(ConfigurationError):
        agent.run("q", session_id="s")
