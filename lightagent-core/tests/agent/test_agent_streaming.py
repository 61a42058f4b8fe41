"""Streaming: OpenAI-compatible chunk dicts, StreamEvents, errors, cancellation (offline)."""

from __future__ import annotations

import asyncio

from lightagent import CancellationToken, LightAgent, ModelError, ScriptedModel, StreamEvent


def openai_consumer(stream) -> str:
    """Code written for the OpenAI stream format, unchanged."""
    text = ""
    for chunk in stream:
        assert chunk["object"] == "chat.completion.chunk"
        delta = chunk["choices"][0]["delta"]
        if delta.get("content"):
            text += delta.get("content")
    return text


def test_stream_yields_openai_chunks(scripted_model: ScriptedModel) -> None:
    scripted_model.add(
        {"content": "Write a short report about AI agents.", "reasoning_content": "plan"}
    )
    agent = LightAgent(model=scripted_model)
    assert (
        openai_consumer(agent.run("report", stream=True)) == "Write a short report about AI agents."
    )
    assert scripted_model.requests[0].stream is True


def test_stream_event_format(scripted_model: ScriptedModel) -> None:
    scripted_model.add({"content": "answer", "reasoning_content": "thinking"})
    agent = LightAgent(model=scripted_model)
    events = list(agent.run("q", stream=True, result_format="event"))
    assert all(isinstance(e, StreamEvent) for e in events)
    assert "".join(e.data for e in events if e.type == "reasoning") == "thinking"
    assert "".join(e.data for e in events if e.type == "content") == "answer"
    assert events[-1].type == "done"
    assert events[-1].data["content"] == "answer"
    assert events[-1].data["reasoning_content"] == "thinking"
    assert len({e.trace_id for e in events}) == 1


def test_stream_error_is_a_final_item() -> None:
    agent = LightAgent(model=ScriptedModel([ModelError("LA-429", "slow down")]))
    items = list(agent.run("q", stream=True))
    assert items == [items[-1]] and items[-1]["code"] == "LA-429"
    assert items[-1]["error"].startswith("[LA-429] slow down")
    agent = LightAgent(model=ScriptedModel([ModelError("LA-429", "slow down")]))
    events = list(agent.run("q", stream=True, result_format="event"))
    assert [e.type for e in events] == ["error", "done"]
    assert events[-1].data["error"]["code"] == "LA-429"


class _Truncating(ScriptedModel):
    """A model whose stream ends without its final response (a cut connection)."""

    def stream(self, request):
        for item in super().stream(request):
            if isinstance(item, dict):
                yield item


def test_stream_that_ends_without_a_final_response_is_an_error() -> None:
    agent = LightAgent(model=_Truncating(["partial answer"]))
    items = list(agent.run("q", stream=True))
    assert items[-1]["code"] == "LA-TRUNCATED"
    assert (
        "".join(i["choices"][0]["delta"].get("content") or "" for i in items[:-1])
        == "partial answer"
    )


def test_cancel_mid_stream_stops_the_run() -> None:
    token = CancellationToken()
    model = ScriptedModel(["a long answer that comes in many small chunks"], chunk_size=4)
    agent = LightAgent(model=model)
    seen = []
    for item in agent.run("q", stream=True, cancellation_token=token):
        seen.append(item)
        if len(seen) == 3:
            token.cancel("user pressed stop")
    assert seen[-1]["code"] == "LA-CANCELLED"
    assert "user pressed stop" in seen[-1]["error"]
    assert len(seen) == 4


def test_closing_the_stream_early_is_clean(scripted_model: ScriptedModel) -> None:
    scripted_model.add("one two three four five six")
    agent = LightAgent(model=scripted_model)
    stream = agent.run("q", stream=True)
    next(stream)
    stream.close()


def test_async_stream_both_entry_points() -> None:
    model = ScriptedModel(["first answer", "second answer"])
    agent = LightAgent(model=model)

    async def main() -> tuple[str, str]:
        a = ""
        async for chunk in agent.astream("q"):
            a += chunk["choices"][0]["delta"].get("content") or ""
        b = ""
        async for event in await agent.arun("q", stream=True, result_format="event"):
            if event.type == "content":
                b += event.data
        return a, b

    assert asyncio.run(main()) == ("first answer", "second answer")
    model.assert_exhausted()


def test_an_answer_cut_at_the_token_limit_is_not_the_answer() -> None:
    model = ScriptedModel([{"content": "The three reasons are: first", "finish_reason": "length"}])
    result = LightAgent(model=model).run("why?", result_format="object")
    assert result.error["code"] == "LA-TRUNCATED"
    assert result.error["details"]["partial_content"] == "The three reasons are: first"
