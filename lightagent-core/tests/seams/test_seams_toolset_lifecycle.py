"""Connection-based toolsets live on one owner task: entered from asyncio.run, used from
sync and async runs, closed from another thread or loop, cleanly and without warnings."""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings

import pytest
from lightagent import LightAgent

from .conftest import SubprocessCountToolset, TcpShoutToolset


def _agent(server, *toolsets):
    return LightAgent(
        model="loopback-model", api_key="k", base_url=server.base_url, tools=list(toolsets)
    )


def _shout_then_answer(server, text="hello"):
    server.reply({"tool_calls": [{"name": "shout", "arguments": {"text": text}}]}, "done")


def _tool_message(request):
    return next(m for m in request["messages"] if m["role"] == "tool")["content"]


def test_entered_in_asyncio_run_then_used_by_plain_run_and_closed_from_a_thread(
    loopback_server, line_server
):
    toolset = TcpShoutToolset(line_server.port)
    agent = _agent(loopback_server, toolset)
    gc.collect()  # earlier tests' garbage must not warn inside the block below
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(agent.aopen())  # the loop of asyncio.run is gone after this line
        assert toolset.entered == 1 and line_server.wait_opened(1)
        _shout_then_answer(loopback_server)
        assert agent.run("shout hello") == "done"
        assert _tool_message(loopback_server.requests[-1]) == "HELLO"
        closer = threading.Thread(target=agent.close)
        closer.start()
        closer.join(10)
        assert toolset.exited == 1
        assert line_server.wait_closed(1)
        gc.collect()
    bad = [w for w in caught if issubclass(w.category, (ResourceWarning, RuntimeWarning))]
    assert not bad, [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in bad]


def test_async_with_agent_and_arun_from_another_loop(loopback_server, line_server):
    toolset = TcpShoutToolset(line_server.port)
    agent = _agent(loopback_server, toolset)

    async def main():
        async with agent:
            _shout_then_answer(loopback_server, "a b")
            return await agent.arun("shout")

    assert asyncio.run(main()) == "done"
    assert _tool_message(loopback_server.requests[-1]) == "A B"
    assert toolset.entered == toolset.exited == 1
    assert line_server.wait_closed(1)


def test_with_agent_opens_lazily_streams_and_closes(loopback_server, line_server):
    toolset = TcpShoutToolset(line_server.port)
    with _agent(loopback_server, toolset) as agent:
        _shout_then_answer(loopback_server, "x")
        chunks = list(agent.run("go", stream=True))
        outputs = [c["output"] for c in chunks if isinstance(c, dict) and "output" in c]
        assert outputs == ["X"]
        _shout_then_answer(loopback_server, "y")

        async def consume():
            return [e async for e in agent.astream("go", result_format="event")]

        events = asyncio.run(consume())
        assert any(e.type == "tool_result" and e.data["output"] == "Y" for e in events)
    assert toolset.exited == 1 and line_server.wait_closed(1)


def test_a_subprocess_toolset_closes_from_another_loop_and_reopens(loopback_server):
    toolset = SubprocessCountToolset()
    agent = _agent(loopback_server, toolset)
    loopback_server.reply(
        {"tool_calls": [{"name": "count_words", "arguments": {"text": "one two three"}}]}, "3"
    )
    assert asyncio.run(agent.arun("count")) == "3"
    assert _tool_message(loopback_server.requests[-1]) == "3"
    asyncio.run(agent.aclose())  # a different loop than any that used it
    assert toolset.returncode == 0
    # closed is not dead: the next use opens it again, on the owner loop
    loopback_server.reply(
        {"tool_calls": [{"name": "count_words", "arguments": {"text": "a b"}}]}, "2"
    )
    assert agent.run("count") == "2"
    agent.close()
    assert toolset.returncode == 0


def test_concurrent_runs_share_one_connection(loopback_server, line_server):
    toolset = TcpShoutToolset(line_server.port)
    agent = _agent(loopback_server, toolset)

    def reply(body):
        last = body["messages"][-1]
        if last["role"] == "tool":
            return f"got {last['content']}"
        return {
            "tool_calls": [
                {"name": "shout", "arguments": {"text": body["messages"][-1]["content"]}}
            ]
        }

    loopback_server.default = reply

    async def main():
        return await asyncio.gather(*(agent.arun(f"q{i}") for i in range(6)))

    answers = asyncio.run(main())
    answers += [agent.run("q9")]
    assert sorted(answers) == sorted([f"got Q{i}" for i in range(6)] + ["got Q9"])
    assert line_server.wait_opened(1) and line_server.opened == 1 and toolset.entered == 1
    agent.close()
    assert line_server.wait_closed(1)


def test_a_toolset_that_cannot_open_leaves_the_others_working(loopback_server, line_server):
    dead = TcpShoutToolset(1)  # nothing listens on port 1
    dead.namespace = "dead"

    def echo(text: str) -> str:
        """Echo."""
        return text

    agent = LightAgent(
        model="loopback-model", api_key="k", base_url=loopback_server.base_url, tools=[echo, dead]
    )
    loopback_server.reply({"tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}]}, "ok")
    result = agent.run("x", result_format="object", trace=True)
    assert result.content == "ok" and result.tool_calls[0]["output"] == "hi"
    errors = [e["data"] for e in result.trace if e["type"] == "toolset_error"]
    assert errors and errors[0]["toolset"] == "dead"
    offered = [t["function"]["name"] for t in loopback_server.requests[0]["tools"]]
    assert offered == ["echo"]
    agent.close()


@pytest.mark.parametrize("opener", ["sync", "async"])
def test_remove_toolset_closes_it(loopback_server, line_server, opener):
    toolset = TcpShoutToolset(line_server.port)
    agent = _agent(loopback_server, toolset)
    agent.open()
    if opener == "sync":
        agent.remove_toolset("tcp")
    else:
        asyncio.run(agent.aremove_toolset(toolset))
    assert toolset.exited == 1 and agent.toolsets == []
    assert line_server.wait_closed(1)


def test_a_dropped_unclosed_agent_closes_its_toolset_in_the_owner_task(
    loopback_server, line_server
):
    toolset = TcpShoutToolset(line_server.port)
    agent = _agent(loopback_server, toolset)
    agent.open()
    assert line_server.wait_opened(1)
    del agent
    gc.collect()
    assert line_server.wait_closed(1), "the toolset of a collected agent was never closed"
    assert toolset.exited == 1
