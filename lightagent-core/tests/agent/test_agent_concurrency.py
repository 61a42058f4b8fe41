"""One agent, many concurrent runs: per-run state only, transcripts never mix."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.models.base import ModelRequest


def make_tool(i: int):
    @tool(name=f"secret_{i}")
    async def secret(user: str) -> str:
        """Return the secret of this run's user."""
        await asyncio.sleep(0.001 * (i % 5))  # interleave the runs
        return f"secret-{i}-for-{user}"

    return secret


def answer(messages: list[dict], tool_names: list[str]) -> dict | str:
    """Reply from the request alone: call this run's tool, then echo its output."""
    last = messages[-1]
    if last["role"] == "tool":
        return f"final: {last['content']}"
    i = int(last["content"].split()[-1])
    assert tool_names == [f"secret_{i}"], tool_names  # only this run's tools were offered
    return {"tool_calls": [{"name": f"secret_{i}", "arguments": {"user": f"user{i}"}}]}


def check(results: list, n: int) -> None:
    for i, result in enumerate(results):
        assert result.success, result.error
        assert result.content == f"final: secret-{i}-for-user{i}"
        transcript = json.dumps(result.messages)
        for j in range(n):
            if j != i:
                assert f'secret_{j}"' not in transcript and f"-{j}-for" not in transcript
        assert [c["name"] for c in result.tool_calls] == [f"secret_{i}"]
        assert all(e["run_id"] == result.run_id for e in result.trace)


def test_fifty_concurrent_aruns_on_the_loopback_server(loopback_server) -> None:
    loopback_server.default = lambda body: answer(
        body["messages"], [t["function"]["name"] for t in body.get("tools") or ()]
    )
    agent = LightAgent(model="gpt-4.1", api_key="test", base_url=loopback_server.base_url)

    async def main() -> list:
        return await asyncio.gather(
            *(
                agent.arun(
                    f"what is the secret of run {i}",
                    tools=[make_tool(i)],
                    user_id=f"user{i}",
                    result_format="object",
                    trace=True,
                )
                for i in range(50)
            )
        )

    results = asyncio.run(main())
    check(results, 50)
    assert len(loopback_server.requests) == 100
    assert len(agent.tools) == 0


def test_threads_share_one_agent_with_a_function_model() -> None:
    def reply(request: ModelRequest):
        return answer(request.messages, [t["function"]["name"] for t in request.tools or ()])

    agent = LightAgent(model=ScriptedModel(reply))
    results: list = [None] * 16

    def worker(i: int) -> None:
        results[i] = agent.run(f"run {i}", tools=[make_tool(i)], result_format="object", trace=True)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(results, 16)


@pytest.mark.slow
def test_load_many_concurrent_streams_and_runs_on_the_loopback_server(loopback_server) -> None:
    """300 runs at once, half streamed, each with its own tool: every transcript is its own."""
    loopback_server.default = lambda body: answer(
        body["messages"], [t["function"]["name"] for t in body.get("tools") or ()]
    )
    agent = LightAgent(model="gpt-4.1", api_key="test", base_url=loopback_server.base_url)

    async def streamed(i: int):
        events = [
            e
            async for e in agent.astream(
                f"what is the secret of run {i}",
                tools=[make_tool(i)],
                result_format="event",
                trace=True,
            )
        ]
        done = events[-1]
        assert done.type == "done"
        from lightagent import RunResult

        return RunResult(**done.data)

    async def main() -> list:
        jobs = []
        for i in range(300):
            if i % 2:
                jobs.append(streamed(i))
            else:
                jobs.append(
                    agent.arun(
                        f"what is the secret of run {i}",
                        tools=[make_tool(i)],
                        result_format="object",
                        trace=True,
                    )
                )
        return await asyncio.gather(*jobs)

    results = asyncio.run(main())
    check(results, 300)
