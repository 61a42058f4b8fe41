"""DBOSAgent in one process, on the embedded SQLite system database and the loopback
OpenAI-wire server: the run is a workflow, each effect a step, a second call with the
same workflow id returns the checkpointed result."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from dbos import DBOS
from lightagent import LightAgent
from lightagent.errors import ConfigurationError
from lightagent.events.sql_store import SqliteSessionStore
from lightagent_dbos import DBOSAgent

from .conftest import unique_name

CALLS: list[str] = []


def get_weather(city: str) -> str:
    """The weather in ``city``."""
    CALLS.append(city)
    return f"{city} is sunny."


def make(server, **kw) -> LightAgent:
    return LightAgent(model="gpt-4.1", api_key="test", base_url=server.base_url, **kw)


def test_run_is_a_workflow_of_steps(dbos_launch, loopback_server) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
        "Oslo is sunny today.",
    )
    durable = DBOSAgent(make(loopback_server, tools=[get_weather]), name=unique_name())
    dbos_launch()
    CALLS.clear()
    out = durable.run("Weather in Oslo?", workflow_id="wf-steps")
    assert out == "Oslo is sunny today."
    assert CALLS == ["Oslo"]
    steps = [s["function_name"] for s in DBOS.list_workflow_steps("wf-steps")]
    assert steps == ["lightagent.model", "lightagent.tool.get_weather", "lightagent.model"]
    # the same workflow id again: DBOS answers from the checkpoint, nothing runs
    again = durable.run("Weather in Oslo?", workflow_id="wf-steps", result_format="object")
    assert again.content == "Oslo is sunny today."
    assert CALLS == ["Oslo"]
    assert len(loopback_server.requests) == 2


def test_run_ids_derive_from_the_workflow_id(dbos_launch, loopback_server) -> None:
    loopback_server.reply("one", "two")
    durable = DBOSAgent(make(loopback_server), name=unique_name())
    dbos_launch()
    first = durable.run("q", workflow_id="wf-a", result_format="object")
    second = durable.run("q", workflow_id="wf-b", result_format="object")
    assert first.run_id != second.run_id
    assert first.run_id.startswith("run_") and first.trace_id.startswith("trace_")
    # what a replay of wf-a would compute
    assert durable.run("q", workflow_id="wf-a", result_format="object").run_id == first.run_id


def test_arun_and_session_log(dbos_launch, loopback_server, tmp_path: Path) -> None:
    loopback_server.reply("first answer", "second answer")
    store = SqliteSessionStore(tmp_path / "s.sqlite3")
    durable = DBOSAgent(make(loopback_server, session_store=store), name=unique_name())
    dbos_launch()
    assert asyncio.run(durable.arun("hi", session_id="s1", workflow_id="wf-1")) == "first answer"
    assert durable.run("and again", session_id="s1", workflow_id="wf-2") == "second answer"
    # the second run saw the first one's turn as history
    sent = loopback_server.requests[1]["messages"]
    assert [m["content"] for m in sent if m["role"] != "system"] == [
        "hi",
        "first answer",
        "and again",
    ]
    types = [e.type for e in store.events("s1")]
    assert types.count("turn.started") == 2 and types.count("run.completed") == 2


def test_options_that_cannot_be_durable_are_refused(dbos_launch, loopback_server) -> None:
    durable = DBOSAgent(make(loopback_server), name=unique_name())
    dbos_launch()
    with pytest.raises(ConfigurationError) as info:
        durable.run("q", tools=[get_weather])
    assert info.value.code == "LA-DBOS-OPTION"


def test_a_name_is_registered_once() -> None:
    name = unique_name()
    DBOSAgent(LightAgent(model="gpt-4.1", api_key="t", base_url="http://127.0.0.1:9/v1"), name=name)
    with pytest.raises(ConfigurationError):
        DBOSAgent(
            LightAgent(model="gpt-4.1", api_key="t", base_url="http://127.0.0.1:9/v1"), name=name
        )


PAID: list[int] = []


def pay(amount: int) -> str:
    """Pay ``amount``."""
    PAID.append(amount)
    return f"paid {amount}"


def test_a_denied_call_does_not_run(dbos_launch, loopback_server) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "pay", "arguments": {"amount": 9}}]}, "I could not pay."
    )
    durable = DBOSAgent(
        make(loopback_server, tools=[pay]), name=unique_name(), approval_tools=["pay"]
    )
    dbos_launch()
    PAID.clear()
    handle = durable.start("Pay 9", workflow_id="wf-deny")
    waiting = DBOSAgent.pending_approval("wf-deny", timeout_seconds=60)
    assert waiting is not None and waiting["tool"] == "pay"
    DBOSAgent.approve("wf-deny", waiting["call_id"], approved=False, reason="over budget")
    assert handle.get_result().content == "I could not pay."
    assert PAID == []
    told = loopback_server.requests[1]["messages"][-1]["content"]
    assert "LA-DBOS-DENIED" in told and "over budget" in told


class NotesMemory:
    """A memory that keeps what it is given in a list."""

    def __init__(self) -> None:
        self.stored: list[str] = []

    def retrieve(self, query: str, user_id: str) -> dict[str, list[dict[str, str]]]:
        return {"results": [{"memory": "The user lives in Oslo."}]}

    def store(self, data: str, user_id: str) -> dict[str, str]:
        self.stored.append(str(data))
        return {"id": str(len(self.stored))}


def test_memory_effects_are_steps(dbos_launch, loopback_server) -> None:
    loopback_server.reply("You live in Oslo.")
    memory = NotesMemory()
    durable = DBOSAgent(make(loopback_server, memory=memory), name=unique_name())
    dbos_launch()
    assert durable.run("Where do I live?", workflow_id="wf-mem") == "You live in Oslo."
    steps = [s["function_name"] for s in DBOS.list_workflow_steps("wf-mem")]
    assert "lightagent.model" in steps
    assert "lightagent.memory.retrieve" in steps and "lightagent.memory.store" in steps
    assert len(memory.stored) == 1  # the write ran once, as a step


def test_astream_streams_a_durable_run(dbos_launch, loopback_server) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
        "Bergen is sunny.",
    )
    durable = DBOSAgent(make(loopback_server, tools=[get_weather]), name=unique_name())
    dbos_launch()

    async def consume() -> list:
        return [
            e async for e in durable.astream("Bergen?", workflow_id="wf-s", result_format="event")
        ]

    events = asyncio.run(consume())
    text = "".join(e.data for e in events if e.type == "content")
    assert text == "Bergen is sunny."
    assert events[-1].type == "done" and events[-1].data["content"] == "Bergen is sunny."
    assert {"tool_call", "tool_result"} <= {e.type for e in events}
    assert loopback_server.requests[0]["stream"] is True
    steps = [s["function_name"] for s in DBOS.list_workflow_steps("wf-s")]
    assert steps == ["lightagent.model", "lightagent.tool.get_weather", "lightagent.model"]

    async def chunks() -> list:
        return [c async for c in durable.astream("Bergen?", workflow_id="wf-s")]

    # the finished run again: its result comes from the checkpoint, nothing is streamed
    assert asyncio.run(chunks()) == []


def test_a_lightflow_step_is_a_durable_run_keyed_by_the_flow(
    dbos_launch, loopback_server, tmp_path: Path
) -> None:
    flow_mod = pytest.importorskip("lightagent_flow")
    loopback_server.reply(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Tromso"}}]},
        "Tromso is sunny.",
    )
    durable = DBOSAgent(make(loopback_server, tools=[get_weather]), name=unique_name())
    dbos_launch()
    CALLS.clear()
    flow = flow_mod.LightFlow(store=flow_mod.JsonLightFlowStore(tmp_path / "flows")).step(
        "forecast", agent=durable
    )
    result = flow.run("Weather in Tromso?", run_id="flow-1")
    assert result.success
    assert result.content == "Tromso is sunny."
    # the step's run is a DBOS workflow named by the flow's idempotency key for the step:
    # a flow that runs the step again (a resume after a crash) gets it from DBOS
    workflow_id = f"{durable.workflow_name}:flow-1:forecast"
    assert DBOS.retrieve_workflow(workflow_id).get_result().content == "Tromso is sunny."
    assert durable.run("Weather in Tromso?", idempotency_key="flow-1:forecast") == (
        "Tromso is sunny."
    )
    assert CALLS == ["Tromso"]


def test_repeated_call_ids_are_repaired_inside_the_checkpoint(dbos_launch, loopback_server) -> None:
    loopback_server.reply(
        {
            "tool_calls": [
                {"id": "dup", "name": "get_weather", "arguments": {"city": "Oslo"}},
                {"id": "dup", "name": "get_weather", "arguments": {"city": "Rome"}},
            ]
        },
        "Both sunny.",
    )
    durable = DBOSAgent(make(loopback_server, tools=[get_weather]), name=unique_name())
    dbos_launch()
    assert durable.run("Oslo and Rome?", workflow_id="wf-dup") == "Both sunny."
    first = DBOS.list_workflow_steps("wf-dup")[0]
    ids = [call.id for call in first["output"].tool_calls]
    # a replay reads these ids from the checkpoint, so it sends the same transcript
    assert len(set(ids)) == 2
    sent = loopback_server.requests[1]["messages"]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ids


def test_a_replay_that_takes_another_path_fails_the_workflow(dbos_launch, loopback_server) -> None:
    loopback_server.reply("one")
    durable = DBOSAgent(make(loopback_server), name=unique_name())
    dbos_launch()
    assert durable.run("q", workflow_id="wf-path") == "one"
    # the agent changed under the checkpoints: its first step is now a memory read
    durable.agent = make(loopback_server, memory=NotesMemory())
    forked = DBOS.fork_workflow("wf-path", 2)  # replays the checkpointed first step
    with pytest.raises(Exception) as info:
        forked.get_result()
    # DBOS's own verdict, not a failed run result the workflow would have kept
    assert type(info.value).__name__ == "DBOSUnexpectedStepError"
