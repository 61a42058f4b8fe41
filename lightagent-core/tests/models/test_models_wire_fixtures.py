"""Every wire fixture in ``wire/`` replayed through the loopback server, the real ``openai``
SDK and :class:`OpenAIModel`, asserting what the fixture says a correct client concludes.

Recorded fixtures keep their upstream file names (see ``wire/README.md``); files named
``synthetic-*`` were written by us for the gaps the README lists (no recorded data).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lightagent.errors import ModelError
from lightagent.models.base import ModelRequest, ModelResponse
from lightagent.models.openai_compat import OpenAIModel
from lightagent.models.profiles import get_profile
from lightagent_contracts.loopback import LoopbackServer
from openai.types.chat import ChatCompletionChunk

WIRE = Path(__file__).parent / "wire"


def load(name: str) -> dict[str, Any]:
    return json.loads((WIRE / name).read_text(encoding="utf-8"))


def tools_for(*names: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": n, "parameters": {"type": "object", "properties": {}}},
        }
        for n in names
    ]


def consumer_view(chunks: list[dict[str, Any]]) -> tuple[str, list[dict[str, str]], list[str]]:
    """What a consumer written for the OpenAI stream format reads from the chunks."""
    text, calls, finishes = "", {}, []
    for raw in chunks:
        chunk = ChatCompletionChunk.model_validate(raw)  # the OpenAI type accepts every chunk
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        text += choice.delta.content or ""
        for frag in choice.delta.tool_calls or ():
            call = calls.setdefault(frag.index, {"id": "", "name": "", "arguments": ""})
            if frag.id:
                call["id"] = frag.id
            if frag.function and frag.function.name:
                call["name"] += frag.function.name
            if frag.function and frag.function.arguments:
                call["arguments"] += frag.function.arguments
        if choice.finish_reason:
            finishes.append(choice.finish_reason)
    return text, [calls[i] for i in sorted(calls)], finishes


class Run:
    def __init__(
        self,
        srv: LoopbackServer,
        name: str,
        *,
        profile: str,
        tools: Any = None,
        messages: list[dict[str, Any]] | None = None,
        max_retry: int = 0,
    ) -> None:
        self.fixture = load(name)
        srv.replay(self.fixture)
        request = self.fixture.get("request") or {}
        self.model = OpenAIModel(
            request.get("model") or "replayed-model",
            base_url=srv.base_url,
            api_key="test-key",
            profile=profile,
            max_retry=max_retry,
            retry_backoff=0.0,
        )
        self.request = ModelRequest(
            messages or request.get("messages") or [{"role": "user", "content": "hi"}],
            tools=tools if tools is not None else request.get("tools"),
        )
        self.chunks: list[dict[str, Any]] = []
        self.srv = srv

    def go(self) -> ModelResponse:
        if "stream" not in self.fixture:
            return self.model.complete(self.request)
        final = None
        for item in self.model.stream(self.request):
            if isinstance(item, ModelResponse):
                final = item
            else:
                self.chunks.append(item)
        assert final is not None
        self.check_consumer(final)
        return final

    def check_consumer(self, response: ModelResponse) -> None:
        text, calls, finishes = consumer_view(self.chunks)
        assert finishes == [response.finish_reason], "exactly one normalized finish chunk"
        assert [(c["id"], c["name"], json.loads(c["arguments"] or "{}")) for c in calls] == [
            (c.id, c.name, json.loads(c.arguments)) for c in response.tool_calls
        ]
        if "leaked_tool_markup" not in response.repairs:
            assert text.strip() == (response.content or "").strip()


def calls_of(response: ModelResponse) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in response.tool_calls]


# -- DeepSeek reasoning_content ----------------------------------------------------------


def test_wire_deepseek_thinking_nonstream(loopback_server: LoopbackServer) -> None:
    r = Run(loopback_server, "deepseek-reasoner-thinking-nonstream.json", profile="deepseek").go()
    assert r.content and r.reasoning_content
    assert r.reasoning_content not in r.content
    assert r.finish_reason == "stop"
    assert r.usage.completion_tokens == 789 and r.usage.reasoning_tokens == 415


def test_wire_deepseek_thinking_stream_usage_on_final_chunk(
    loopback_server: LoopbackServer,
) -> None:
    run = Run(
        loopback_server,
        "deepseek-reasoner-thinking-stream-usage-on-final-chunk.json",
        profile="deepseek",
    )
    r = run.go()
    reasoning = "".join(
        c["choices"][0]["delta"].get("reasoning_content") or "" for c in run.chunks if c["choices"]
    )
    assert r.reasoning_content == reasoning and r.content
    assert r.reasoning_content not in r.content
    assert r.finish_reason == "stop"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.reasoning_tokens) == (
        6,
        212,
        198,
    )
    assert loopback_server.requests[0]["stream_options"] == {"include_usage": True}


def test_wire_deepseek_tool_call_reasoning_echoed_next_turn(
    loopback_server: LoopbackServer,
) -> None:
    run = Run(
        loopback_server,
        "deepseek-reasoner-tool-call-nonstream.json",
        profile="deepseek",
        tools=tools_for("weather"),
    )
    r = run.go()
    assert calls_of(r) == [("weather", {"location": "San Francisco"})]
    assert r.tool_calls[0].id == "call_00_9V0vrf86Pc9aelHCJMZqnJBo"
    assert r.content is None and r.reasoning_content
    # The next request of the tool loop carries the reasoning on that assistant turn.
    loopback_server.reply("It is sunny.")
    history = [
        {"role": "user", "content": "weather?"},
        r.to_message(reasoning=True),
        {"role": "tool", "tool_call_id": r.tool_calls[0].id, "content": "sunny"},
    ]
    assert run.model.complete(ModelRequest(history)).content == "It is sunny."
    sent = loopback_server.requests[-1]["messages"][1]
    assert sent["reasoning_content"] == r.reasoning_content
    assert sent["content"] in ("", None)  # DeepSeek: never a list
    assert sent["tool_calls"][0]["id"] == r.tool_calls[0].id


def test_wire_deepseek_v4_parallel_calls_reasoning_echo(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server,
        "deepseek-v4-thinking-parallel-tool-calls-reasoning-echo.json",
        profile="deepseek",
    )
    r = run.go()
    assert calls_of(r) == [("get_player_name", {}), ("roll_dice", {})]
    assert [c.id for c in r.tool_calls] == [
        "call_00_6edlnw3Z1MgeMfey687g8451",
        "call_01_km02sac7sHxNDPATKLZy7705",
    ]
    assert r.content == "Let me get your name and roll the die!"
    assert r.reasoning_content and r.model == "deepseek-v4-flash"
    # The recorded request echoed reasoning_content (even "") on tool-call turns: we send it unchanged.
    recorded = run.fixture["request"]["messages"]
    assert loopback_server.requests[0]["messages"] == recorded
    # Under a profile that drops reasoning, it is stripped; plain turns never carry it.
    stripped = get_profile("openai").prepare_messages(recorded)
    assert not any("reasoning_content" in m for m in stripped)
    assert recorded[3].get("reasoning_content")  # the caller's list is never mutated


# -- Zhipu GLM ---------------------------------------------------------------------------


def test_wire_zhipu_parallel_tool_calls_stream(loopback_server: LoopbackServer) -> None:
    r = Run(
        loopback_server, "zhipu-glm-4.7-flash-parallel-tool-calls-stream.json", profile="zhipu"
    ).go()
    assert calls_of(r) == [("add", {"a": 2, "b": 3}), ("multiply", {"a": 2, "b": 3})]
    assert [c.id for c in r.tool_calls] == [
        "call_4f8cb52342424eb9bbc1b20e",
        "call_0d06add371834452b339ffdb",
    ]
    assert r.reasoning_content and r.content and r.reasoning_content not in r.content
    assert r.finish_reason == "tool_calls"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.reasoning_tokens) == (
        275,
        112,
        64,
    )


def test_wire_zhipu_thinking_stream(loopback_server: LoopbackServer) -> None:
    run = Run(loopback_server, "zhipu-glm-4.7-thinking-stream.json", profile="glm")
    r = run.go()
    assert r.content == "4" and r.reasoning_content
    assert r.finish_reason == "stop"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.reasoning_tokens) == (
        13,
        564,
        561,
    )


# -- Moonshot / Kimi ---------------------------------------------------------------------


def test_wire_kimi_reasoning_field_duplicate_finish(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server,
        "kimi-k2.5-openrouter-reasoning-field-parallel-tools-duplicate-finish.json",
        profile="openrouter",
    )
    r = run.go()
    assert calls_of(r) == [("add", {"a": 2, "b": 3}), ("multiply", {"a": 2, "b": 3})]
    assert r.reasoning_content  # from delta.reasoning, renamed for consumers
    assert any("reasoning_content" in c["choices"][0]["delta"] for c in run.chunks if c["choices"])
    assert not any("reasoning" in c["choices"][0]["delta"] for c in run.chunks if c["choices"])
    assert "duplicate_finish" in r.repairs
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (125, 97)
    assert r.model == "moonshotai/kimi-k2.5-0127"


def test_wire_kimi_ids_name_colon_index(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server,
        "moonshot-kimi-k2-openrouter-stream-ids-name-colon-index.json",
        profile="moonshot",
    )
    r = run.go()
    assert calls_of(r) == [("add", {"a": 2, "b": 3}), ("multiply", {"a": 2, "b": 3})]
    assert [c.id for c in r.tool_calls] == ["add:0", "multiply:1"]
    assert r.content  # text before the calls is kept
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (154, 52)


# -- tool calls as text / finish mismatches ----------------------------------------------


def test_wire_llamacpp_tool_markup_leak_removed(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server,
        "llamacpp-qwen3-coder-tool-markup-leaks-into-content-stream.json",
        profile="llamacpp",
        tools=tools_for("get_current_weather"),
    )
    r = run.go()
    assert calls_of(r) == [("get_current_weather", {"location": "Washington DC"})]
    assert r.tool_calls[0].id == "emGvNsMhrq1M2MOwwmEiS9MHA7L1XNrE"
    expected = "Hi there! Let me check the current weather for Washington DC for you."
    assert r.content == expected
    streamed, _, _ = consumer_view(run.chunks)
    assert streamed.strip() == expected  # the leaked markup never reached the consumer
    assert r.usage is None  # llama.cpp sent timings only


def test_wire_ollama_hermes_tool_calls_as_text(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server,
        "ollama-hermes2pro-tool-calls-as-text-in-content.json",
        profile="ollama",
        tools=tools_for("get_current_time"),
    )
    r = run.go()
    assert calls_of(r) == [
        ("get_current_time", {"timezone": "Europe/Paris"}),
        ("get_current_time", {"timezone": "America/New_York"}),
    ]
    ids = [c.id for c in r.tool_calls]
    assert all(i.startswith("call_") for i in ids) and len(set(ids)) == 2
    assert r.content is None and r.finish_reason == "tool_calls"
    assert "tool_calls_in_text" in r.repairs
    message = r.to_message()
    assert [c["id"] for c in message["tool_calls"]] == ids


def test_wire_ollama_hermes_text_without_offered_tool_stays_text(
    loopback_server: LoopbackServer,
) -> None:
    r = Run(
        loopback_server,
        "ollama-hermes2pro-tool-calls-as-text-in-content.json",
        profile="ollama",
        tools=tools_for("other"),
    ).go()
    assert r.tool_calls == [] and "<tool_call>" in r.content and r.finish_reason == "stop"


@pytest.mark.parametrize(
    "name",
    [
        "ollama-qwen2.5-coder-tool-call-as-fenced-xml-text.json",
        "ollama-qwen2.5-coder-tool-call-as-self-closing-tag-text.json",
    ],
)
def test_wire_ollama_qwen_text_calls_recovered_when_offered(
    loopback_server: LoopbackServer, name: str
) -> None:
    run = Run(loopback_server, name, profile="ollama", tools=tools_for("run_command"))
    r = run.go()
    assert calls_of(r) == [("run_command", {"command": "ls -l"})]
    assert r.content is None and r.finish_reason == "tool_calls"
    text, calls, _ = consumer_view(run.chunks)
    assert text == "" and calls[0]["name"] == "run_command"


@pytest.mark.parametrize(
    "name",
    [
        "ollama-qwen2.5-coder-tool-call-as-fenced-xml-text.json",
        "ollama-qwen2.5-coder-tool-call-as-self-closing-tag-text.json",
    ],
)
def test_wire_ollama_qwen_text_plain_without_tools(
    loopback_server: LoopbackServer, name: str
) -> None:
    r = Run(loopback_server, name, profile="ollama", tools=[]).go()
    assert r.tool_calls == [] and "run_command" in r.content and r.finish_reason == "stop"


def test_wire_vllm_hermes_parser_stream(loopback_server: LoopbackServer) -> None:
    r = Run(
        loopback_server,
        "vllm-qwen-hermes-parser-tool-call-stream.json",
        profile="vllm",
        tools=tools_for("run_command"),
    ).go()
    assert calls_of(r) == [("run_command", {"command": "ls"})]
    assert r.tool_calls[0].id == "chatcmpl-tool-ca99dda515524c6abe47d1ea22813507"
    assert r.usage is None and r.content is None


# -- ids, indexes, finish reasons --------------------------------------------------------


def test_wire_gateway_tool_call_index_starts_at_1(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server,
        "anthropic-openai-compat-gateway-tool-call-index-starts-at-1.json",
        profile="generic",
    )
    r = run.go()
    assert calls_of(r) == [("read_file", {"path": "a.txt"})]
    assert r.tool_calls[0].index == 0 and r.content == "Reading it."
    assert {
        tc["index"]
        for c in run.chunks
        if c["choices"]
        for tc in c["choices"][0]["delta"].get("tool_calls") or ()
    } == {0}


def test_wire_cerebras_parallel_calls_in_one_chunk(loopback_server: LoopbackServer) -> None:
    r = Run(
        loopback_server,
        "cerebras-qwen3-coder-parallel-tool-calls-in-one-chunk.json",
        profile="generic",
    ).go()
    assert calls_of(r) == [("add", {"a": 2, "b": 3}), ("multiply", {"a": 2, "b": 3})]
    assert [c.id for c in r.tool_calls] == ["ab8048658", "b249e0b3f"]
    assert r.finish_reason == "tool_calls"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (408, 59)


def test_wire_gemini_empty_id_synthesized(loopback_server: LoopbackServer) -> None:
    r = Run(loopback_server, "gemini-openai-compat-tool-call-empty-id.json", profile="generic").go()
    assert calls_of(r) == [("get_current_time", {})]
    call_id = r.tool_calls[0].id
    assert call_id.startswith("call_") and len(call_id) > 10
    assert r.to_message()["tool_calls"][0]["id"] == call_id
    assert "synthesized_call_id" in r.repairs
    assert r.content is None  # thought_signature extras are never shown


def test_wire_ollama_finish_reason_empty_string(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server, "ollama-mistral-stream-finish-reason-empty-string.json", profile="ollama"
    )
    with pytest.raises(ModelError) as info:
        run.go()
    # "" is "still running": every chunk passes with finish_reason None and the text appends...
    assert [c["choices"][0]["finish_reason"] for c in run.chunks] == [None] * 5
    assert (
        "".join(c["choices"][0]["delta"]["content"] for c in run.chunks)
        == " if you have any questions"
    )
    # ...and the recorded excerpt ends without a finish: a truncation, never a success.
    assert info.value.code == "LA-TRUNCATED"
    assert info.value.details["partial_content"] == " if you have any questions"


# -- OpenRouter errors and extras; in-band errors ----------------------------------------


def test_wire_groq_inband_tool_use_failed(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server, "groq-gpt-oss-stream-tool-use-failed-error-chunk.json", profile="generic"
    )
    with pytest.raises(ModelError) as info:
        run.go()
    details = info.value.details
    assert info.value.code == "LA-400"
    assert details["provider_code"] == "tool_use_failed"
    assert "get_something_by_name" in details["failed_generation"]
    assert details["retry_by_reprompt"] is True
    assert run.chunks and all(c["choices"][0]["finish_reason"] is None for c in run.chunks)


def test_wire_openrouter_429_retried_then_raised(loopback_server: LoopbackServer) -> None:
    fixture = load("openrouter-429-upstream-rate-limit-error-body.json")
    loopback_server.replay(fixture).replay(fixture)  # the cassette recorded it three times
    run = Run(
        loopback_server,
        "openrouter-429-upstream-rate-limit-error-body.json",
        profile="openrouter",
        max_retry=2,
    )
    with pytest.raises(ModelError) as info:
        run.go()
    assert info.value.code == "LA-429"
    assert info.value.details["status_code"] == 429 and info.value.details["attempts"] == 3
    assert "temporarily rate-limited upstream" in info.value.details["provider_error"]
    assert len(loopback_server.requests) == 3


def test_wire_openrouter_minimax_error_chunk_after_length(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server,
        "openrouter-minimax-m2-stream-error-chunk-after-length.json",
        profile="openrouter",
    )
    with pytest.raises(ModelError) as info:
        run.go()
    assert info.value.code == "LA-400"
    assert "Token limit reached" in info.value.details["provider_error"]
    text, _, finishes = consumer_view(run.chunks)
    assert text == "" and finishes == ["length"]  # the duplicate length finish is sent once
    reasoning = "".join(c["choices"][0]["delta"].get("reasoning_content") or "" for c in run.chunks)
    assert reasoning == "We need to respond to a greeting. The user"


def test_wire_openrouter_mistral_extra_fields(loopback_server: LoopbackServer) -> None:
    r = Run(
        loopback_server,
        "openrouter-mistral-small-tool-call-extra-fields.json",
        profile="openrouter",
    ).go()
    assert calls_of(r) == [("divide", {"numerator": 123, "denominator": 456, "on_inf": "infinity"})]
    assert r.tool_calls[0].id == "3sniiMddS"
    assert r.content is None and r.reasoning_content is None


# -- llama.cpp / Ollama reasoning and usage ----------------------------------------------


def test_wire_llamacpp_reasoning_tool_call_usage_timings(loopback_server: LoopbackServer) -> None:
    r = Run(
        loopback_server,
        "llamacpp-gpt-oss-reasoning-tool-call-stream-usage-timings.json",
        profile="llamacpp",
    ).go()
    assert calls_of(r) == [("weather", {"location": "Florence, Italy"})]
    assert r.tool_calls[0].id == "g2KOIWzn722hzEaZQmNVP4roUPEiYafL"
    assert r.reasoning_content
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (139, 41)


def test_wire_ollama_cloud_reasoning_field(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server, "ollama-cloud-gpt-oss-reasoning-field-tool-call.json", profile="ollama"
    )
    r = run.go()
    assert calls_of(r) == [("final_result", {"city": "Paris", "country": "France"})]
    assert r.tool_calls[0].id == "call_o2vnpxrw"
    assert r.reasoning_content and r.content is None
    # Ollama reads reasoning back from `reasoning`, as the recorded request history shows.
    sent = loopback_server.requests[0]["messages"]
    assert sent == run.fixture["request"]["messages"]
    echoed = get_profile("ollama").assistant_message(r)
    assert echoed["reasoning"] == r.reasoning_content and "reasoning_content" not in echoed


# -- synthetic fixtures for the README's gaps --------------------------------------------


def test_wire_synthetic_interleaved_parallel_calls(loopback_server: LoopbackServer) -> None:
    r = Run(
        loopback_server, "synthetic-interleaved-parallel-tool-calls-stream.json", profile="vllm"
    ).go()
    assert calls_of(r) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    assert [c.id for c in r.tool_calls] == ["call_A", "call_B"]
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (20, 10)


def test_wire_synthetic_ollama_calls_without_id_or_index(loopback_server: LoopbackServer) -> None:
    r = Run(
        loopback_server, "synthetic-ollama-stream-tool-calls-no-id-no-index.json", profile="ollama"
    ).go()
    assert calls_of(r) == [("add", {"a": 2, "b": 3}), ("multiply", {"a": 2, "b": 3})]
    assert len({c.id for c in r.tool_calls}) == 2


def test_wire_synthetic_finish_reason_error(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server, "synthetic-openrouter-finish-reason-error.json", profile="openrouter"
    )
    with pytest.raises(ModelError) as info:
        run.go()
    assert (
        info.value.code == "LA-PROVIDER" and info.value.details["partial_content"] == "Partial answ"
    )


def test_wire_synthetic_hermes_streamed_markup_never_reaches_consumer(
    loopback_server: LoopbackServer,
) -> None:
    run = Run(
        loopback_server,
        "synthetic-hermes-tool-call-in-streamed-content.json",
        profile="vllm",
        tools=tools_for("add"),
    )
    r = run.go()
    assert calls_of(r) == [("add", {"a": 1, "b": 2})]
    assert r.content == "Let me add." and r.finish_reason == "tool_calls"
    text, calls, finishes = consumer_view(run.chunks)
    assert "<" not in text and text.strip() == "Let me add."
    assert calls[0]["name"] == "add" and finishes == ["tool_calls"]


def test_wire_synthetic_truncated_after_reasoning(loopback_server: LoopbackServer) -> None:
    run = Run(
        loopback_server, "synthetic-stream-truncated-after-reasoning.json", profile="deepseek"
    )
    with pytest.raises(ModelError) as info:
        run.go()
    assert info.value.code == "LA-TRUNCATED"
    assert info.value.details["partial_reasoning"] == "Let me think"


def test_wire_synthetic_finish_reason_drift(loopback_server: LoopbackServer) -> None:
    r = Run(loopback_server, "synthetic-finish-reason-drift.json", profile="generic").go()
    assert calls_of(r) == [("add", {"a": 1})] and r.finish_reason == "tool_calls"


def test_wire_synthetic_tool_calls_with_finish_stop(loopback_server: LoopbackServer) -> None:
    r = Run(loopback_server, "synthetic-tool-calls-with-finish-stop.json", profile="qwen").go()
    assert calls_of(r) == [("add", {"a": 1})] and r.finish_reason == "tool_calls"


def test_wire_synthetic_finish_tool_calls_without_calls(loopback_server: LoopbackServer) -> None:
    r = Run(
        loopback_server, "synthetic-finish-tool-calls-without-calls.json", profile="generic"
    ).go()
    assert r.tool_calls == [] and r.content == "Done." and r.finish_reason == "stop"


def test_wire_synthetic_malformed_arguments(loopback_server: LoopbackServer) -> None:
    r = Run(loopback_server, "synthetic-malformed-arguments.json", profile="ollama").go()
    got = [(c.id, json.loads(c.arguments), c.error is None) for c in r.tool_calls]
    assert got == [
        ("c1", {}, True),
        ("c2", {}, True),
        ("c3", {"a": 1, "b": 2}, True),
        ("c4", {"a": 1, "b": True}, True),
        ("c5", {}, False),
    ]
    assert "not valid JSON" in r.tool_calls[4].error
    assert r.tool_calls[4].raw_arguments == '{"a": 1, "b": '


def test_wire_synthetic_dashscope_empty_id_continuation(loopback_server: LoopbackServer) -> None:
    r = Run(loopback_server, "synthetic-dashscope-empty-id-continuation.json", profile="qwen").go()
    assert calls_of(r) == [("get_weather", {"city": "Hangzhou"})]
    assert r.tool_calls[0].id == "call_qwen_1"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (30, 12)


def test_wire_every_fixture_has_a_test() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    missing = [p.name for p in WIRE.glob("*.json") if p.name not in source]
    assert missing == []
