"""Argument normalization, text tool-call recovery, provider profiles and the stream assembler."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lightagent.errors import ConfigurationError, ModelError
from lightagent.models.arguments import normalize_arguments
from lightagent.models.base import ModelResponse, ToolCall, Usage
from lightagent.models.parse import normalize_finish_reason, parse_completion
from lightagent.models.profiles import (
    PROFILES,
    ProviderProfile,
    assistant_message,
    get_profile,
    is_local_url,
    register_profile,
)
from lightagent.models.stream import StreamAssembler
from lightagent.models.text_tools import extract_text_tool_calls, strip_leaked_markup

# -- arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, {}),
        ("", {}),
        ("   ", {}),
        ("null", {}),
        ('{"a": 1}', {"a": 1}),
        ({"a": [1, 2]}, {"a": [1, 2]}),
        ("{'a': 'x', 'b': None, 'c': True}", {"a": "x", "b": None, "c": True}),
        ('"{\\"a\\": 1}"', {"a": 1}),  # JSON encoded twice
        ('```json\n{"a": 1}\n```', {"a": 1}),
        (' {"a": "é"} ', {"a": "é"}),
    ],
)
def test_arguments_normalized(raw: object, expected: dict) -> None:
    text, error = normalize_arguments(raw)
    assert error is None and json.loads(text) == expected


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ('{"a": 1,', "not valid JSON"),
        ("[1, 2]", "got array"),
        ("42", "got int"),
        ('"just text"', "got str"),
        ("{'a': __import__('os').system('x')}", "not valid JSON"),  # literal_eval refuses calls
        (["a"], "got array"),
        (3.5, "got float"),
    ],
)
def test_arguments_errors_are_reported_not_raised(raw: object, needle: str) -> None:
    text, error = normalize_arguments(raw)
    assert text == "{}" and error is not None and needle in error


def test_arguments_valid_object_text_is_kept_verbatim() -> None:
    raw = '{"b":1,"a":2}'
    assert normalize_arguments(raw)[0] is raw


@given(
    st.one_of(
        st.none(),
        st.text(max_size=60),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    )
)
def test_arguments_never_raise_and_always_give_an_object(raw: object) -> None:
    text, error = normalize_arguments(raw)
    assert isinstance(json.loads(text), dict)
    assert error is None or isinstance(error, str)


# -- text tool calls ---------------------------------------------------------------------

NAMES = {"add", "run_command"}


def test_text_hermes_blocks() -> None:
    content = 'Sure.\n<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>'
    assert extract_text_tool_calls(content, NAMES) == ("Sure.", [("add", {"a": 1})])


def test_text_qwen3_coder_xml() -> None:
    content = "<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\nx y\n</parameter>\n</function>\n</tool_call>"
    assert extract_text_tool_calls(content, NAMES) == (None, [("add", {"a": 1, "b": "x y"})])


def test_text_bare_json_object_and_list() -> None:
    assert extract_text_tool_calls('{"name": "add", "arguments": {"a": 1}}', NAMES) == (
        None,
        [("add", {"a": 1})],
    )
    both = '[{"name": "add", "parameters": {}}, {"function": {"name": "run_command", "arguments": "{}"}}]'
    assert extract_text_tool_calls(both, NAMES) == (None, [("add", {}), ("run_command", "{}")])


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "delete_everything", "arguments": {}}',  # not an offered tool
        'Here is how: ```\n<tool_call>{"name": "add", "arguments": {}}</tool_call>\n```',  # a markdown example
        "The <tool_call> tag is how Hermes models call tools.",  # prose
        '{"answer": 42}',
        "a < b and c > d",
    ],
)
def test_text_not_a_call(content: str) -> None:
    assert extract_text_tool_calls(content, NAMES) is None


def test_text_unknown_name_in_tags_leaves_text() -> None:
    assert (
        extract_text_tool_calls('<tool_call>{"name": "rm", "arguments": {}}</tool_call>', NAMES)
        is None
    )


def test_text_no_tools_offered() -> None:
    assert extract_text_tool_calls('{"name": "add", "arguments": {}}', set()) is None


def test_strip_leaked_markup() -> None:
    assert strip_leaked_markup("Checking.\n<tool_call>\n<function=get") == "Checking."
    assert strip_leaked_markup("<tool_call>") is None
    assert strip_leaked_markup("plain") == "plain"


# -- profiles ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "name"),
    [
        (("deepseek",), {}, "deepseek"),
        (("KIMI",), {}, "moonshot"),
        (("dashscope",), {}, "qwen"),
        (("glm",), {}, "zhipu"),
        (("llama.cpp",), {}, "llamacpp"),
        (("https://api.deepseek.com/v1",), {}, "deepseek"),
        (("some-model",), {"base_url": "https://openrouter.ai/api/v1"}, "openrouter"),
        (("qwen2.5",), {"base_url": "http://localhost:11434/v1"}, "ollama"),
        (("x",), {"base_url": "http://127.0.0.1:8080/v1"}, "llamacpp"),
        (("x",), {"base_url": "http://10.0.0.5:8000/v1"}, "vllm"),
        (("deepseek-chat",), {"base_url": "https://gateway.example.com/v1"}, "deepseek"),
        (("gpt-4o",), {"base_url": "http://127.0.0.1:5555/v1"}, "generic"),
        (("gpt-4o-mini",), {}, "openai"),
        (("qwen-max",), {}, "qwen"),
        (("moonshotai/kimi-k2",), {}, "moonshot"),
        ((None,), {}, "openai"),
    ],
)
def test_profile_selection(args: tuple, kwargs: dict, name: str) -> None:
    assert get_profile(*args, **kwargs).name == name


def test_profile_lookup_is_cached_and_objects_pass_through() -> None:
    assert get_profile("deepseek") is get_profile("deepseek")
    custom = ProviderProfile("custom-x")
    assert get_profile(custom) is custom


def test_profile_register_conflict_is_typed() -> None:
    with pytest.raises(ConfigurationError):
        register_profile(ProviderProfile("openai"))
    register_profile(ProviderProfile("acme", hosts=("llm.acme.test",)), replace=True)
    try:
        assert get_profile("m", base_url="https://llm.acme.test/v1").name == "acme"
    finally:
        PROFILES.pop("acme")


def test_profile_local_urls() -> None:
    assert is_local_url("http://localhost:11434/v1") and is_local_url("http://192.168.1.4:8000")
    assert is_local_url("http://172.20.0.2:80") and not is_local_url("https://api.openai.com/v1")
    assert not is_local_url(None)


def _history() -> list[dict]:
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    return [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "reasoning_content": "think", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "3"},
        {"role": "assistant", "content": "three", "reasoning_content": "done"},
        {"role": "assistant", "content": [], "tool_calls": [call]},
    ]


def test_profile_reasoning_roundtrip_rules() -> None:
    history = _history()
    snapshot = json.dumps(history)
    deepseek = get_profile("deepseek").prepare_messages(history)
    assert deepseek[1]["reasoning_content"] == "think"  # echoed on tool-call turns
    assert "reasoning_content" not in deepseek[3]  # never on plain turns
    assert (
        deepseek[4]["reasoning_content"] == "" and deepseek[4]["content"] is None
    )  # filled; never a list
    openai_ = get_profile("openai").prepare_messages(history)
    assert not any("reasoning_content" in m for m in openai_)
    ollama = get_profile("ollama").prepare_messages(history)
    assert ollama[1]["reasoning"] == "think" and ollama[3]["reasoning"] == "done"
    assert not any("reasoning_content" in m for m in ollama)
    openrouter = get_profile("openrouter").prepare_messages(history)
    assert openrouter[1]["reasoning"] == "think" and "reasoning" not in openrouter[3]
    assert json.dumps(history) == snapshot  # never mutated


def test_profile_prepare_messages_fast_path_returns_same_list() -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert get_profile("deepseek").prepare_messages(plain) is plain


def test_assistant_message_helper() -> None:
    response = ModelResponse(
        content=None, reasoning_content="r", tool_calls=[ToolCall("c1", "add", "{}")]
    )
    assert assistant_message(response)["reasoning_content"] == "r"
    assert assistant_message(response, "moonshot")["reasoning_content"] == "r"
    assert "reasoning_content" not in assistant_message(response, "openai")
    assert "reasoning_content" not in response.to_message()


# -- finish reasons, parsing, assembler ---------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        (None, None),
        ("", None),
        ("stop", "stop"),
        ("tool_use", "tool_calls"),
        ("function_call", "tool_calls"),
        ("tool_call", "tool_calls"),
        ("max_tokens", "length"),
        ("end_turn", "stop"),
        ("error", "error"),
        ("weird", "stop"),
        ("SAFETY", "content_filter"),
    ],
)
def test_finish_reason_vocabulary(raw: str | None, norm: str | None) -> None:
    assert normalize_finish_reason(raw) == norm


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def test_assembler_same_index_different_ids_are_two_calls() -> None:
    asm = StreamAssembler(get_profile("generic"))
    asm.feed(
        _chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "a", "function": {"name": "add", "arguments": "{}"}}
                ]
            }
        )
    )
    asm.feed(
        _chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "b", "function": {"name": "add", "arguments": '{"x":1}'}}
                ]
            }
        )
    )
    asm.feed(_chunk({}, "tool_calls"))
    r = asm.close()
    assert [(c.id, c.arguments) for c in r.tool_calls] == [("a", "{}"), ("b", '{"x":1}')]


def test_assembler_dict_arguments_and_legacy_nonstream_function_call() -> None:
    asm = StreamAssembler(get_profile("ollama"))
    asm.feed(
        _chunk(
            {"tool_calls": [{"index": 0, "function": {"name": "add", "arguments": {"a": 1}}}]},
            "stop",
        )
    )
    assert json.loads(asm.close().tool_calls[0].arguments) == {"a": 1}
    data = {
        "choices": [
            {
                "message": {"content": None, "function_call": {"name": "add", "arguments": "{}"}},
                "finish_reason": "function_call",
            }
        ]
    }
    r = parse_completion(data, get_profile("openai"))
    assert r.tool_calls[0].name == "add" and r.finish_reason == "tool_calls"


def test_assembler_length_finish_is_reported_not_hidden() -> None:
    asm = StreamAssembler(get_profile("openai"))
    asm.feed(_chunk({"content": "abc"}, "length"))
    assert asm.close().finish_reason == "length"


def test_assembler_inband_error_chunk() -> None:
    asm = StreamAssembler(get_profile("openrouter"))
    asm.feed(_chunk({"content": "a"}))
    with pytest.raises(ModelError) as info:
        asm.feed({"error": {"code": 502, "message": "upstream died"}})
    assert info.value.code == "LA-500" and info.value.details["partial_content"] == "a"


def test_assembler_text_gate_releases_ordinary_angle_brackets() -> None:
    asm = StreamAssembler(get_profile("vllm"), {"add"})
    out = []
    for piece in ["if a <", " b then", " <b>bold</b>"]:
        out += asm.feed(_chunk({"content": piece}))
    out += asm.feed(_chunk({}, "stop"))
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in out)
    assert text == "if a < b then <b>bold</b>" == asm.close().content


def test_usage_details_roundtrip() -> None:
    u = Usage.from_any(
        {
            "prompt_tokens": 5,
            "completion_tokens": 7,
            "total_tokens": 12,
            "completion_tokens_details": {"reasoning_tokens": 3},
            "prompt_cache_hit_tokens": 2,
        }
    )
    assert (u.reasoning_tokens, u.cached_tokens) == (3, 2)
    assert (u + u).to_dict()["completion_tokens_details"] == {"reasoning_tokens": 6}
    assert Usage(1, 2, 3).to_dict() == {
        "prompt_tokens": 1,
        "completion_tokens": 2,
        "total_tokens": 3,
    }


def _split_points(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


@given(
    st.lists(
        st.sampled_from([*"ab <>`{}[]/\n\"'=_", "add", "tool_call", "```", "<add"]), max_size=30
    ).map("".join),
    st.lists(st.integers(min_value=0, max_value=80), max_size=8),
)
def test_text_gate_never_loses_or_reorders_plain_text(text: str, cuts: list[int]) -> None:
    asm = StreamAssembler(get_profile("vllm"), {"add"})
    out = []
    for piece in _split_points(text, cuts):
        out += asm.feed(_chunk({"content": piece}))
    out += asm.feed(_chunk({}, "stop"))
    response = asm.close()
    streamed = "".join(c["choices"][0]["delta"].get("content") or "" for c in out)
    if response.tool_calls:
        assert "tool_calls_in_text" in response.repairs
    else:
        assert streamed == text and (response.content or "") == text


@given(
    st.dictionaries(st.sampled_from("abcxyz"), st.text(max_size=12), max_size=4),
    st.dictionaries(st.sampled_from("pq"), st.integers(), max_size=3),
    st.lists(st.integers(min_value=0, max_value=60), max_size=6),
    st.lists(st.booleans(), min_size=1, max_size=30),
)
def test_assembler_reassembles_any_fragmentation(
    a: dict, b: dict, cuts: list[int], order: list[bool]
) -> None:
    """Two calls' arguments cut anywhere and interleaved in any order come back whole."""
    frags = []
    for index, (name, args) in enumerate((("first", a), ("second", b))):
        pieces = _split_points(json.dumps(args), cuts)
        head = {
            "index": index,
            "id": f"id{index}",
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        frags.append([head] + [{"index": index, "function": {"arguments": p}} for p in pieces])
    first, second, sequence, turn = frags[0], frags[1], [], 0
    # Heads go out in index order; the rest interleave as ``order`` says.
    sequence += [first.pop(0), second.pop(0)]
    while first or second:
        pick = first if (order[turn % len(order)] and first) or not second else second
        sequence.append(pick.pop(0))
        turn += 1
    asm = StreamAssembler(get_profile("generic"))
    for frag in sequence:
        asm.feed(_chunk({"tool_calls": [frag]}))
    asm.feed(_chunk({}, "tool_calls"))
    r = asm.close()
    assert [(c.id, c.name, json.loads(c.arguments)) for c in r.tool_calls] == [
        ("id0", "first", a),
        ("id1", "second", b),
    ]


def test_scripted_model_single_reply_is_not_split() -> None:
    from lightagent.models.base import ModelRequest
    from lightagent.models.scripted import ScriptedModel

    model = ScriptedModel("hello")
    assert model.remaining == 1
    assert model.complete(ModelRequest([])).content == "hello"
    model.assert_exhausted()


def test_text_broken_call_to_offered_tool_is_kept_with_an_error() -> None:
    trailing_comma = '<tool_call>{"name": "add", "arguments": {"a": 1,}}</tool_call>'
    assert extract_text_tool_calls(trailing_comma, NAMES) == (None, [("add", {"a": 1})])
    content = '<tool_call>{"name": "add", "arguments": {"a": }}</tool_call>'
    remaining, calls = extract_text_tool_calls(content, NAMES)
    assert remaining is None and calls[0][0] == "add"
    text, error = normalize_arguments(calls[0][1])
    assert text == "{}" and "not valid JSON" in error
    single = "<tool_call>{'name': 'add', 'arguments': {'a': 2}}</tool_call>"
    assert extract_text_tool_calls(single, NAMES) == (None, [("add", {"a": 2})])
    assert (
        extract_text_tool_calls('<tool_call>{"name": "rm", "arguments": {,}}</tool_call>', NAMES)
        is None
    )


def test_assembler_text_call_with_broken_json_reaches_loop_as_error() -> None:
    asm = StreamAssembler(get_profile("ollama"), {"add"})
    out = asm.feed(
        _chunk({"content": '<tool_call>{"name": "add", "arguments": {"a": }}</tool_call>'}, "stop")
    )
    r = asm.close()
    assert (
        r.tool_calls[0].name == "add" and r.tool_calls[0].error and r.finish_reason == "tool_calls"
    )
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in out) == ""


def test_text_gate_holds_a_reply_that_opens_with_markup() -> None:
    asm = StreamAssembler(get_profile("ollama"), {"run_command"})
    first = asm.feed(_chunk({"content": "<command>\n  <run_command>"}))
    assert first[0]["choices"][0]["delta"]["content"] == ""
    asm.feed(_chunk({"content": "<command>ls</command></run_command>\n</command>"}, "stop"))
    assert json.loads(asm.close().tool_calls[0].arguments) == {"command": "ls"}


def test_assembler_repeated_name_fragments_stay_one_call() -> None:
    asm = StreamAssembler(get_profile("vllm"))
    asm.feed(
        _chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "c1", "function": {"name": "add", "arguments": '{"a": 1}'}}
                ]
            }
        )
    )
    asm.feed(_chunk({"tool_calls": [{"index": 0, "function": {"name": "add", "arguments": ""}}]}))
    asm.feed(_chunk({}, "tool_calls"))
    assert [(c.id, c.arguments) for c in asm.close().tool_calls] == [("c1", '{"a": 1}')]


def test_assembler_two_whole_calls_on_index_zero_without_ids() -> None:
    asm = StreamAssembler(get_profile("ollama"))
    for args in ('{"a": 1}', '{"a": 2}'):
        asm.feed(
            _chunk({"tool_calls": [{"index": 0, "function": {"name": "add", "arguments": args}}]})
        )
    asm.feed(_chunk({}, "tool_calls"))
    calls = asm.close().tool_calls
    assert [c.arguments for c in calls] == ['{"a": 1}', '{"a": 2}'] and calls[0].id != calls[1].id
