"""DBOSFlowExecutor in one process: a flow execution is a DBOS workflow, each step a DBOS
step; a DBOSAgent step agent runs as a workflow of its own, keyed by the flow step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dbos import DBOS
from lightagent import LightAgent
from lightagent.errors import ConfigurationError
from lightagent_dbos import DBOSAgent, DBOSFlowExecutor

from .conftest import unique_name

flow_mod = pytest.importorskip("lightagent_flow")

CALLS: list[str] = []


def get_weather(city: str) -> str:
    """The weather in ``city``."""
    CALLS.append(city)
    return f"{city} is sunny."


def test_a_flow_execution_is_a_workflow_of_steps(dbos_launch, tmp_path: Path) -> None:
    executor = DBOSFlowExecutor(name=unique_name("flow"))
    dbos_launch()
    ran: list[str] = []
    flow = (
        flow_mod.LightFlow(
            store=flow_mod.SqlLightFlowStore(f"sqlite:///{tmp_path / 'f.db'}"), executor=executor
        )
        .step("a", agent=lambda q: ran.append("a") or "A")
        .step("b", agent=lambda q: ran.append("b") or "B", depends_on="a")
        .step("c", agent=lambda q: ran.append("c") or "C", depends_on="a")
    )
    result = flow.run("q", run_id="run-1")
    assert result.success and result.content == "C" and ran == ["a", "b", "c"]
    wid = f"{executor.workflow_name}:run-1"
    steps = [s["function_name"] for s in DBOS.list_workflow_steps(wid)]
    assert steps == ["lightflow.step.a", "lightflow.step.b", "lightflow.step.c"]
    assert DBOS.retrieve_workflow(wid).get_result()["status"] == "success"
    # a rerun is new work: a workflow of its own, with only the steps it runs
    flow.rerun_step("run-1", "b")
    reruns = [w.workflow_id for w in DBOS.list_workflows() if ":rerun-" in w.workflow_id]
    assert len(reruns) == 1 and ran == ["a", "b", "c", "b"]
    assert [s["function_name"] for s in DBOS.list_workflow_steps(reruns[0])] == ["lightflow.step.b"]


def test_a_dbos_agent_step_runs_as_its_own_workflow(
    dbos_launch, loopback_server, tmp_path: Path
) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
        "Bergen is sunny.",
    )
    agent = LightAgent(
        model="gpt-4.1", api_key="test", base_url=loopback_server.base_url, tools=[get_weather]
    )
    durable = DBOSAgent(agent, name=unique_name())
    executor = DBOSFlowExecutor(name=unique_name("flow"))
    dbos_launch()
    CALLS.clear()
    flow = flow_mod.LightFlow(executor=executor).step("forecast", agent=durable)
    result = flow.run("Weather in Bergen?", run_id="flow-2")
    assert result.success and result.content == "Bergen is sunny."
    assert CALLS == ["Bergen"]
    child = f"{durable.workflow_name}:flow-2:forecast"
    assert DBOS.retrieve_workflow(child).get_result().content == "Bergen is sunny."
    steps = [s["function_name"] for s in DBOS.list_workflow_steps(child)]
    assert steps == ["lightagent.model", "lightagent.tool.get_weather", "lightagent.model"]
    # in the flow's workflow the step is a child workflow, not a step
    parent = DBOS.list_workflow_steps(f"{executor.workflow_name}:flow-2")
    assert parent[0]["function_name"] == durable.workflow_name
    assert {s["child_workflow_id"] for s in parent} == {child}


def test_a_run_id_dbos_has_finished_is_answered_from_its_record(dbos_launch) -> None:
    executor = DBOSFlowExecutor(name=unique_name("flow"))
    dbos_launch()
    ran: list[str] = []

    def build() -> object:
        return flow_mod.LightFlow(executor=executor).step("a", agent=lambda q: ran.append(q) or "A")

    first = build().run("q", run_id="same")
    # another flow object, with a store that does not know the run (a memory store)
    again = build().run("q", run_id="same")
    assert ran == ["q"]  # DBOS returned the recorded execution; the step did not run
    assert again.success and again.content == "A" == first.content
    assert again.steps["a"].status == "success"


def test_executor_names_are_checked() -> None:
    name = unique_name("flow")
    DBOSFlowExecutor(name=name)
    with pytest.raises(ConfigurationError):
        DBOSFlowExecutor(name=name)
    with pytest.raises(ConfigurationError):
        DBOSFlowExecutor(name="")
    with pytest.raises(ConfigurationError) as info:
        flow_mod.LightFlow(executor=object())
    assert info.value.code == "LA-CONFIG"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def system_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_flow_killed_between_steps_resumes_without_the_finished_step(
    system_db: str, tmp_path: Path
) -> None:
    from .children import last_json, spawn

    child = Path(__file__).with_name("flow_child.py")
    os.mkfifo(tmp_path / "fifo")
    cfg = {
        "dir": str(tmp_path),
        "url": system_db,
        "name": unique_name("crashflow"),
        "run_id": "report-1",
        "mode": "run",
        "block": True,
    }
    first = spawn(cfg, child)
    with open(tmp_path / "fifo", encoding="utf-8") as fifo:  # research is done, write runs
        assert fifo.readline() == "started\n"
    first.kill()
    first.wait()

    result = last_json(spawn({**cfg, "mode": "recover", "block": False}, child))
    assert result == {"status": "success", "content": "essay from facts", "stored": "success"}
    research = (tmp_path / "research.log").read_text().splitlines()
    write = (tmp_path / "write.log").read_text().splitlines()
    assert len(research) == 1  # the finished step came from its checkpoint
    assert len(write) == 2 and write[0] == research[0] != write[1]  # interrupted: run again
