"""LightFlow steps and LightDAG task attempts as spans, with the agents they run nested inside."""

from __future__ import annotations

import asyncio
import uuid

from lightagent import LightAgent, PermissionSet, SecurityContext
from lightagent_dag import (
    CallableVerifier,
    DAGConfig,
    LightAgentWorkerAdapter,
    LightDAG,
    LocalArtifactStore,
    SqliteTaskGraphStore,
    TaskOutcome,
    TaskSpec,
)
from lightagent_flow import LightFlow
from opentelemetry.trace import StatusCode


def agent_for(server, name: str) -> LightAgent:
    return LightAgent(name=name, model="gpt-4.1", api_key="k", base_url=server.base_url)


def test_flow_run_is_one_trace_with_steps_and_their_agents(loopback_server, traced) -> None:
    loopback_server.reply("facts", "summary")
    research = agent_for(loopback_server, "researcher")
    writer = agent_for(loopback_server, "writer")

    def write(query: str, **kwargs):  # a sync step: LightFlow runs it on an executor thread
        return writer.run(query, **kwargs)

    flow = LightFlow().step("research", research).step("write", write, depends_on="research")
    result = flow.run("Tell me about otters")
    assert result.status == "success"
    root = traced.one("invoke_workflow LightFlow")
    assert root.parent is None
    assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["lightagent.flow.status"] == "success"
    assert traced.trace_ids() == {root.context.trace_id}, "one trace per flow run"
    steps = {s.name: s for s in traced.named("step ")}
    assert set(steps) == {"step research", "step write"}
    for step in steps.values():
        assert step.parent.span_id == root.context.span_id
        assert step.attributes["lightagent.flow.status"] == "success"
    # each agent run sits under the step that ran it (async agent and sync callable alike)
    assert traced.one("invoke_agent researcher").parent.span_id == (
        steps["step research"].context.span_id
    )
    assert traced.one("invoke_agent writer").parent.span_id == steps["step write"].context.span_id
    assert steps["step research"].end_time <= steps["step write"].start_time


def test_a_failed_step_is_an_error_span_and_skips_show(loopback_server, traced) -> None:
    loopback_server.reply(loopback_server.error(400))
    flow = (
        LightFlow()
        .step("first", agent_for(loopback_server, "a"))
        .step("second", agent_for(loopback_server, "b"), depends_on="first")
    )
    result = flow.run("x")
    assert result.status == "failed"
    first, second = traced.one("step first"), traced.one("step second")
    assert first.status.status_code is StatusCode.ERROR
    assert first.attributes["error.type"] == "LA-400"
    assert second.attributes["lightagent.flow.status"] == "skipped"
    assert traced.one("invoke_workflow LightFlow").status.status_code is StatusCode.ERROR


def test_dag_attempts_are_spans_with_their_agents_inside(loopback_server, traced, tmp_path) -> None:
    loopback_server.reply("Paris")
    agent = agent_for(loopback_server, "geo")
    dag = LightDAG(
        store=SqliteTaskGraphStore(tmp_path / "dag.sqlite3"),
        artifact_store=LocalArtifactStore(tmp_path / "artifacts"),
        config=DAGConfig(poll_interval=0.01, poll_interval_max=0.05, retry_backoff_seconds=0.01),
        verifiers={"v": CallableVerifier("v", lambda r: True)},
    )
    asked = []

    def plain(ctx):  # a sync worker (run in a thread) that is not an agent
        asked.append(ctx.task_id)
        return TaskOutcome.candidate(f"done {ctx.task_id}")

    dag.register_worker("agent", LightAgentWorkerAdapter(agent))
    dag.register_worker("plain", plain)
    specs = [
        TaskSpec(
            task_id="capital",
            goal="capital of France",
            acceptance_contract={},
            worker_key="agent",
            verifier_key="v",
        ),
        TaskSpec(
            task_id="report",
            goal="report",
            acceptance_contract={},
            worker_key="plain",
            verifier_key="v",
            depends_on=("capital",),
        ),
    ]
    security = SecurityContext(
        user_id="alice",
        tenant_id="acme",
        project_id="p1",
        permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
    )
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    dag.create_run(specs, run_id=run_id, context=security)
    assert asyncio.run(dag.arun(run_id)).success
    root = traced.one("invoke_workflow LightDAG")
    assert root.attributes["lightagent.dag.status"] == "succeeded"
    capital, report = traced.one("dag_task capital"), traced.one("dag_task report")
    for span in (capital, report):
        assert span.parent.span_id == root.context.span_id
        assert span.attributes["lightagent.dag.outcome"] == "verified"
        assert span.attributes["lightagent.dag.worker_key"] in ("agent", "plain")
    assert traced.one("invoke_agent geo").parent.span_id == capital.context.span_id
    assert traced.trace_ids() == {root.context.trace_id}


def test_a_failing_dag_attempt_is_an_error_span(traced, tmp_path) -> None:
    dag = LightDAG(
        store=SqliteTaskGraphStore(tmp_path / "dag.sqlite3"),
        artifact_store=LocalArtifactStore(tmp_path / "artifacts"),
        config=DAGConfig(
            poll_interval=0.01,
            poll_interval_max=0.05,
            retry_backoff_seconds=0.01,
            max_attempts_per_task=2,
        ),
        verifiers={"v": CallableVerifier("v", lambda r: True)},
    )

    def broken(ctx):
        raise ValueError("no good")

    dag.register_worker("w", broken)
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    security = SecurityContext(
        user_id="alice",
        tenant_id="acme",
        project_id="p1",
        permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
    )
    dag.create_run(
        [TaskSpec(task_id="t", goal="g", acceptance_contract={}, worker_key="w", verifier_key="v")],
        run_id=run_id,
        context=security,
    )
    assert not dag.run(run_id).success
    attempts = traced.named("dag_task t")
    assert len(attempts) >= 2
    for span in attempts:
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes["lightagent.dag.outcome"] == "retry"
    assert traced.one("invoke_workflow LightDAG").status.status_code is StatusCode.ERROR


def test_a_flow_cancelled_from_outside_still_ends_its_spans(traced) -> None:
    import gc

    import pytest

    started = asyncio.Event()

    async def slow(query: str) -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    flow = LightFlow().step("wait", slow)

    async def main() -> None:
        task = asyncio.ensure_future(flow.arun("x"))
        await started.wait()
        task.cancel()  # the caller gives up: no flow_end is ever emitted
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    gc.collect()
    for name in ("invoke_workflow LightFlow", "step wait"):
        span = traced.one(name)
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes["error.type"] == "abandoned"
