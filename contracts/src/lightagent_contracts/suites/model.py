"""The ``Model`` contract suite.

Subclass :class:`ModelContract` and provide a ``make_model`` fixture: a factory
``make_model(replies) -> Model`` whose model answers its calls with ``replies`` in order,
and ``make_failing_model``: a factory of a model whose next call meets a provider failure
(an HTTP 500, a dropped connection …) and must raise a typed ``ModelError``.
Replies use the shapes both :class:`~lightagent.models.scripted.ScriptedModel` and the
loopback server accept: a string, or ``{"content", "tool_calls": [{"name", "arguments"}],
"usage"}``::

    class TestScripted(ModelContract):
        @pytest.fixture
        def make_model(self):
            return lambda replies: ScriptedModel(replies)

        @pytest.fixture
        def make_failing_model(self):
            return lambda: ScriptedModel([ModelError("LA-500", "upstream failed")])

    class TestOpenAI(ModelContract):
        @pytest.fixture
        def make_model(self, loopback_server):
            def make(replies):
                loopback_server.reply(*replies)
                return OpenAIModel("m", base_url=loopback_server.base_url, api_key="test")
            return make
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from lightagent.errors import ModelError
from lightagent.models.adapt import as_model, is_model
from lightagent.models.base import Model, ModelRequest, ModelResponse

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["ModelContract"]

MakeModel = Callable[[Sequence[Any]], Any]
_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
        },
    }
]


def _request(stream: bool = False, tools: bool = False) -> ModelRequest:
    return ModelRequest(
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "What is 2 + 3?"},
        ],
        tools=copy.deepcopy(_TOOLS) if tools else None,
        stream=stream,
    )


def _split_stream(items: list[Any]) -> tuple[list[dict[str, Any]], ModelResponse]:
    assert items, "the stream yielded nothing"
    *chunks, final = items
    assert isinstance(final, ModelResponse), "a stream must end with one ModelResponse"
    assert all(isinstance(c, dict) for c in chunks), "before the end a stream yields chunk dicts"
    return chunks, final


def _streamed_text(chunks: list[dict[str, Any]]) -> str:
    text = []
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                text.append(piece)
    return "".join(text)


async def _collect(agen: Any) -> list[Any]:
    return [item async for item in agen]


class ModelContract(ContractSuite):
    """Behaviour every model provider shows. Provide ``make_model(replies) -> Model``."""

    _contract_suite = True
    __test__ = False

    def test_follows_the_model_protocol(self, make_model: MakeModel) -> None:
        provided = make_model([])
        assert is_model(provided), "a model provider writes acomplete() or complete()"
        model = as_model(provided)  # the kernel adapts what the provider leaves out
        assert isinstance(model, Model)
        assert isinstance(model.name, str) and model.name

    def test_complete_returns_text(self, make_model: MakeModel) -> None:
        model = as_model(make_model(["5"]))
        response = model.complete(_request())
        assert isinstance(response, ModelResponse)
        assert response.content == "5"
        assert response.tool_calls == []
        assert response.finish_reason == "stop"

    def test_acomplete_returns_text(self, make_model: MakeModel) -> None:
        model = as_model(make_model(["five"]))
        response = asyncio.run(model.acomplete(_request()))
        assert response.content == "five"

    def test_complete_returns_a_tool_call(self, make_model: MakeModel) -> None:
        model = as_model(
            make_model([{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}])
        )
        response = model.complete(_request(tools=True))
        assert response.finish_reason == "tool_calls"
        (call,) = response.tool_calls
        assert call.name == "add"
        assert json.loads(call.arguments) == {"a": 2, "b": 3}
        assert isinstance(call.id, str) and call.id
        message = response.to_message()
        assert message["tool_calls"][0]["function"]["name"] == "add"

    def test_parallel_tool_calls_keep_order_and_distinct_ids(self, make_model: MakeModel) -> None:
        calls = [
            {"name": "add", "arguments": {"a": 1, "b": 2}},
            {"name": "add", "arguments": {"a": 3, "b": 4}},
        ]
        model = as_model(make_model([{"tool_calls": calls}]))
        response = model.complete(_request(tools=True))
        assert [json.loads(c.arguments) for c in response.tool_calls] == [
            {"a": 1, "b": 2},
            {"a": 3, "b": 4},
        ]
        assert len({c.id for c in response.tool_calls}) == 2

    def test_stream_yields_chunks_then_one_response(self, make_model: MakeModel) -> None:
        text = "The answer is five, as two plus three makes five."
        model = as_model(make_model([text]))
        chunks, final = _split_stream(list(model.stream(_request(stream=True))))
        assert final.content == text
        assert _streamed_text(chunks) == text

    def test_astream_yields_chunks_then_one_response(self, make_model: MakeModel) -> None:
        text = "Streaming on the event loop works the same way."
        model = as_model(make_model([text]))
        chunks, final = _split_stream(asyncio.run(_collect(model.astream(_request(stream=True)))))
        assert final.content == text
        assert _streamed_text(chunks) == text

    def test_stream_assembles_tool_calls(self, make_model: MakeModel) -> None:
        model = as_model(
            make_model([{"tool_calls": [{"name": "add", "arguments": {"a": 20, "b": 22}}]}])
        )
        _, final = _split_stream(list(model.stream(_request(stream=True, tools=True))))
        (call,) = final.tool_calls
        assert call.name == "add" and json.loads(call.arguments) == {"a": 20, "b": 22}
        assert final.finish_reason == "tool_calls"

    def test_usage_is_reported(self, make_model: MakeModel) -> None:
        usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        model = as_model(make_model([{"content": "ok", "usage": usage}]))
        response = model.complete(_request())
        assert response.usage is not None
        assert response.usage.to_dict() == usage

    def test_request_is_not_mutated(self, make_model: MakeModel) -> None:
        model = as_model(make_model(["ok"]))
        request = _request(tools=True)
        before = copy.deepcopy((request.messages, request.tools, request.options))
        model.complete(request)
        assert (request.messages, request.tools, request.options) == before

    def test_provider_failure_is_a_typed_model_error(
        self, make_failing_model: Callable[[], Any]
    ) -> None:
        model = as_model(make_failing_model())
        with pytest.raises(ModelError) as info:
            model.complete(_request())
        assert info.value.code.startswith("LA-")
        assert str(info.value).startswith(f"[{info.value.code}]")
