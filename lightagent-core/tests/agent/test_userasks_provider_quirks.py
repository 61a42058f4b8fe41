"""User asks 1, 2, 4, 5, 7 and 29 (shared/research/user-asks.md), end to end through the agent.

The model-level tests replay each quirk through ``OpenAIModel``; these drive the whole
loop (agent -> OpenAIModel -> openai SDK -> loopback server) and check what the *next*
request carries, which is where users see the 400s.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from lightagent import InMemorySessionStore, LightAgent, OpenAIModel, tool
from lightagent.models.profiles import ProviderProfile
from lightagent_contracts.loopback import LoopbackServer

CALLS: list[tuple[int, int]] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    CALLS.append((a, b))
    return a + b


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.clear()


def model_for(srv: LoopbackServer, profile: str | ProviderProfile, name: str = "m") -> OpenAIModel:
    return OpenAIModel(name, base_url=srv.base_url, api_key="k", profile=profile, max_retry=0)


def assistant_turns(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


def drain(agent: LightAgent, query: str, **kw: Any) -> list[dict[str, Any]]:
    return list(agent.run(query, stream=True, **kw))


# -- 1. reasoning_content goes back on tool-call turns (DeepSeek thinking mode) -----------


@pytest.mark.parametrize("stream", [False, True])
def test_deepseek_reasoning_rides_back_on_the_tool_turn_across_runs(
    loopback_server: LoopbackServer, stream: bool
) -> None:
    loopback_server.reply(
        {
            "reasoning_content": "I should add.",
            "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}],
        },
        {"reasoning_content": "The tool said 3.", "content": "3"},
        {"reasoning_content": "Again plain.", "content": "still 3"},
    )
    store = InMemorySessionStore()
    agent = LightAgent(
        model=model_for(loopback_server, "deepseek", "deepseek-reasoner"),
        tools=[add],
        session_store=store,
    )
    if stream:
        drain(agent, "1+2?", session_id="s")
        drain(agent, "and again?", session_id="s")
    else:
        assert agent.run("1+2?", session_id="s") == "3"
        assert agent.run("and again?", session_id="s") == "still 3"
    assert CALLS == [(1, 2)]
    # In the run: the tool-call turn carries its reasoning, content is "" or null, never a list.
    tool_turn = assistant_turns(loopback_server.requests[1])[-1]
    assert tool_turn["tool_calls"] and tool_turn["reasoning_content"] == "I should add."
    assert tool_turn["content"] in ("", None)
    # Next run, history from the session: still there on the tool turn, absent on the answer.
    history = assistant_turns(loopback_server.requests[2])
    assert [bool(m.get("tool_calls")) for m in history] == [True, False]
    assert history[0]["reasoning_content"] == "I should add."
    assert "reasoning_content" not in history[1]


def test_reasoning_is_never_sent_back_under_a_profile_that_drops_it(
    loopback_server: LoopbackServer,
) -> None:
    loopback_server.reply(
        {
            "reasoning_content": "think",
            "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}],
        },
        {"reasoning_content": "think more", "content": "3"},
    )
    agent = LightAgent(model=model_for(loopback_server, "openai", "gpt-4o-mini"), tools=[add])
    result = agent.run("1+2?", result_format="object")
    assert result.content == "3" and result.reasoning_content == "think more"
    sent = loopback_server.requests[1]["messages"]
    assert not any("reasoning_content" in m or "reasoning" in m for m in sent)


# -- 2. tool calls written as text --------------------------------------------------------


HERMES = '<tool_call>{"name": "add", "arguments": {"a": 4, "b": 5}}</tool_call>'


@pytest.mark.parametrize("stream", [False, True])
def test_text_tool_call_runs_the_tool_under_a_profile_that_parses_text(
    loopback_server: LoopbackServer, stream: bool
) -> None:
    loopback_server.reply({"content": HERMES, "finish_reason": "stop"}, "9")
    agent = LightAgent(model=model_for(loopback_server, "vllm"), tools=[add])
    if stream:
        items = drain(agent, "4+5?")
        shown = "".join(
            i["choices"][0]["delta"].get("content") or "" for i in items if "choices" in i
        )
        assert "<tool_call>" not in shown and shown.endswith("9")
    else:
        assert agent.run("4+5?") == "9"
    assert CALLS == [(4, 5)]
    second = loopback_server.requests[1]["messages"]
    call = second[-2]["tool_calls"][0]
    assert call["id"].startswith("call_") and call["function"]["name"] == "add"
    assert "<tool_call>" not in (second[-2]["content"] or "")
    assert second[-1] == {"role": "tool", "tool_call_id": call["id"], "content": "9"}


@pytest.mark.parametrize(
    ("profile", "content"),
    [
        ("openai", HERMES),  # text_tool_calls is off for OpenAI
        ("vllm", f"Here is how a call looks:\n```\n{HERMES}\n```\nThat is all."),
    ],
)
def test_text_that_only_looks_like_a_call_is_the_answer(
    loopback_server: LoopbackServer, profile: str, content: str
) -> None:
    loopback_server.reply({"content": content, "finish_reason": "stop"})
    agent = LightAgent(model=model_for(loopback_server, profile), tools=[add])
    assert agent.run("show me") == content
    assert CALLS == [] and len(loopback_server.requests) == 1


# -- 4. text or whitespace before a streamed call never ends the run ---------------------


@pytest.mark.parametrize("prefix", ["\n\n", " ", "I'll look it up."])
def test_streamed_text_before_a_tool_call_is_not_the_final_answer(
    loopback_server: LoopbackServer, prefix: str
) -> None:
    loopback_server.reply(
        {"content": prefix, "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 2}}]}, "4"
    )
    agent = LightAgent(model=model_for(loopback_server, "openai", "gpt-4o-mini"), tools=[add])
    events = list(agent.run("2+2?", stream=True, result_format="event"))
    assert CALLS == [(2, 2)] and len(loopback_server.requests) == 2
    done = events[-1]
    assert done.type == "done" and done.data["content"] == "4" and done.data["error"] is None


def test_a_stream_cut_after_reasoning_is_never_an_answer(loopback_server: LoopbackServer) -> None:
    loopback_server.reply({"reasoning_content": "thinking hard", "truncate": True})
    agent = LightAgent(model=model_for(loopback_server, "deepseek", "deepseek-reasoner"))
    events = list(agent.run("q", stream=True, result_format="event"))
    done = events[-1].data
    assert done["error"]["code"] == "LA-TRUNCATED"
    assert [e.type for e in events].count("error") == 1
    assert len(loopback_server.requests) == 1  # a stream that reached us is not retried


# -- 5. finish_reason drift: the parsed calls decide -------------------------------------


def _raw_completion(message: dict[str, Any], finish: str) -> Any:
    return LoopbackServer.raw(
        body={
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
        }
    )


@pytest.mark.parametrize("finish", ["tool_calls", "tool_call", "function_call"])
def test_a_tool_calls_finish_without_calls_ends_the_run_with_the_text(
    loopback_server: LoopbackServer, finish: str
) -> None:
    loopback_server.reply(_raw_completion({"role": "assistant", "content": "done"}, finish))
    agent = LightAgent(model=model_for(loopback_server, "openai", "gpt-4o-mini"), tools=[add])
    result = agent.run("q", result_format="object")
    assert result.error is None and result.content == "done"
    assert len(loopback_server.requests) == 1


def test_a_stop_finish_with_calls_still_runs_them(loopback_server: LoopbackServer) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a":1,"b":1}'},
    }
    loopback_server.reply(
        _raw_completion({"role": "assistant", "content": None, "tool_calls": [call]}, "stop"), "2"
    )
    agent = LightAgent(model=model_for(loopback_server, "openai", "gpt-4o-mini"), tools=[add])
    assert agent.run("1+1?") == "2"
    assert CALLS == [(1, 1)]


# -- 7. missing ids: synthesized, and parallel calls to one tool keep their results apart --


@pytest.mark.parametrize("missing", ["absent", "empty", "null"])
def test_parallel_calls_without_ids_get_distinct_ids_and_their_own_results(
    loopback_server: LoopbackServer, missing: str
) -> None:
    def call(a: int, b: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "function",
            "function": {"name": "add", "arguments": json.dumps({"a": a, "b": b})},
        }
        if missing != "absent":
            out["id"] = "" if missing == "empty" else None
        return out

    message = {"role": "assistant", "content": "", "tool_calls": [call(1, 2), call(10, 20)]}
    loopback_server.reply(_raw_completion(message, "tool_calls"), "3 and 30")
    agent = LightAgent(model=model_for(loopback_server, "deepseek", "deepseek-chat"), tools=[add])
    assert agent.run("two sums") == "3 and 30"
    assert sorted(CALLS) == [(1, 2), (10, 20)]
    sent = loopback_server.requests[1]["messages"]
    assistant, results = sent[-3], sent[-2:]
    ids = [c["id"] for c in assistant["tool_calls"]]
    assert len(set(ids)) == 2 and all(i and i.startswith("call_") for i in ids)
    assert assistant["content"] in ("", None)  # never a list
    by_id = {m["tool_call_id"]: m["content"] for m in results}
    args = {c["id"]: json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]}
    assert {i: by_id[i] for i in ids} == {i: str(args[i]["a"] + args[i]["b"]) for i in ids}


def test_streamed_calls_without_ids_interleaved_keep_names_and_results(
    loopback_server: LoopbackServer,
) -> None:
    @tool
    def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "s",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def frag(index: int, **fn: str) -> dict[str, Any]:
        return chunk({"tool_calls": [{"index": index, "function": fn}]})

    loopback_server.reply(
        LoopbackServer.raw(
            chunks=[
                chunk({"role": "assistant", "content": ""}),
                frag(0, name="add", arguments='{"a": 2,'),
                frag(1, name="mul", arguments='{"a": 3,'),
                frag(0, arguments=' "b": 5}'),
                frag(1, arguments=' "b": 7}'),
                chunk({}, "tool_calls"),
            ]
        ),
        "7 and 21",
    )
    agent = LightAgent(model=model_for(loopback_server, "vllm"), tools=[add, mul])
    items = drain(agent, "both")
    started = [i for i in items if "choices" not in i and "arguments" in i]
    assert [(s["name"], json.loads(s["arguments"])) for s in started] == [
        ("add", {"a": 2, "b": 5}),
        ("mul", {"a": 3, "b": 7}),
    ]
    sent = loopback_server.requests[1]["messages"]
    ids = [c["id"] for c in sent[-3]["tool_calls"]]
    assert len(set(ids)) == 2 and all(ids)
    assert [(m["tool_call_id"], m["content"]) for m in sent[-2:]] == [(ids[0], "7"), (ids[1], "21")]


# -- 29. usage: the same whether streamed or not; missing usage is not zero ----------------


def test_usage_is_the_same_streamed_and_not(loopback_server: LoopbackServer) -> None:
    script = (
        {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}], "usage": _u(11, 7)},
        {"content": "3", "usage": _u(23, 2)},
    )
    agent = LightAgent(model=model_for(loopback_server, "openai", "gpt-4o-mini"), tools=[add])
    loopback_server.reply(*script)
    plain = agent.run("1+2?", result_format="object").usage
    loopback_server.reply(*script)
    events = list(agent.run("1+2?", stream=True, result_format="event"))
    streamed = events[-1].data["usage"]
    assert plain == streamed == _u(34, 9)
    assert all(
        b.get("stream_options") == {"include_usage": True} for b in loopback_server.requests[2:]
    )


def _u(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def test_cumulative_usage_on_every_chunk_is_not_summed(loopback_server: LoopbackServer) -> None:
    """vLLM's continuous usage stats repeat a running total on every chunk."""

    def chunk(delta: dict[str, Any], completion: int, finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "s",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            "usage": _u(10, completion),
        }

    loopback_server.reply(
        LoopbackServer.raw(
            chunks=[
                chunk({"role": "assistant", "content": "a"}, 1),
                chunk({"content": "b"}, 2),
                chunk({"content": "c"}, 3),
                chunk({}, 3, "stop"),
            ]
        )
    )
    agent = LightAgent(model=model_for(loopback_server, "vllm"))
    events = list(agent.run("q", stream=True, result_format="event"))
    assert events[-1].data["content"] == "abc"
    assert events[-1].data["usage"] == _u(10, 3)


def test_usage_options_follow_the_profile_and_missing_usage_is_not_zero(
    loopback_server: LoopbackServer,
) -> None:
    quiet = ProviderProfile("userasks-no-stream-usage", supports_stream_usage=False)
    loopback_server.reply(
        LoopbackServer.raw(
            chunks=[
                {
                    "id": "s",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": "m",
                    "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
                }
            ]
        )
    )
    agent = LightAgent(model=model_for(loopback_server, quiet))
    events = list(agent.run("q", stream=True, result_format="event"))
    assert "stream_options" not in loopback_server.requests[0]
    assert events[-1].data["content"] == "hi"
    assert events[-1].data["usage"] is None  # unknown, never recorded as 0 tokens


def test_content_on_the_finish_chunk_is_delivered_once(loopback_server: LoopbackServer) -> None:
    """DeepSeek puts the last delta and the usage on the finish chunk (adk-rust#656 doubled it)."""

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": "s",
            "object": "chat.completion.chunk",
            "created": 1,
            "choices": [choice],
            **extra,
        }

    loopback_server.reply(
        LoopbackServer.raw(
            chunks=[
                chunk({"role": "assistant", "content": ""}),
                chunk({"reasoning_content": "think"}),
                chunk({"content": "partial"}),
                chunk({"content": " tail", "reasoning_content": None}, "stop", usage=_u(3, 4)),
            ]
        )
    )
    agent = LightAgent(model=model_for(loopback_server, "deepseek", "deepseek-chat"))
    events = list(agent.run("q", stream=True, result_format="event"))
    assert "".join(e.data for e in events if e.type == "content") == "partial tail"
    assert "".join(e.data for e in events if e.type == "reasoning") == "think"
    done = events[-1].data
    assert done["content"] == "partial tail" and done["usage"] == _u(3, 4)
