"""The lightagent tour (`make demo`).

1. the installed plugins; 2. an agent with tools and a durable SQLite session, continued
over two runs and replayed from its event log; 3. a LightFlow run, checkpointed and
resumed; 4. a LightDAG run with a verifier and an artifact; 5. an MCP server's tools;
6. a LightSwarm handoff between two agents; 7. the trace of a run; 8. memory that fails
closed: tenants, a refused write, a reflection promoted, and mem0; 9. the long-task
runtime: a session budget, a goal, an inbox message, a background job and a subagent;
10. a durable run and a background job on DBOS (skipped when lightagent-dbos is not installed).

Offline by default, on the built-in ScriptedModel and embedded stores (SQLite, JSON files
in a temporary folder). With OPENAI_API_KEY or LIGHTAGENT_BASE_URL set, the same tour runs
against that OpenAI-compatible model (LIGHTAGENT_MODEL picks it; default gpt-4o-mini).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from lightagent import LightAgent, ScriptedModel, summarize_trace, tool
from lightagent.models.base import ModelRequest
from lightagent.plugins import get_host

LIVE = bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("LIGHTAGENT_BASE_URL"))
MODEL = os.environ.get("LIGHTAGENT_MODEL", "gpt-4o-mini")


def use_colour(stream: Any = sys.stdout, environ: Any = os.environ) -> bool:
    """Bold headings only on a terminal; NO_COLOR (any value) turns them off, FORCE_COLOR on."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def section(title: str) -> None:
    heading = f"== {title}"
    print(f"\n\033[1m{heading}\033[0m" if use_colour() else f"\n{heading}")


def show(label: str, value: Any) -> None:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    print(textwrap.fill(f"{label}: {text}", width=100, subsequent_indent="    "))


def model_for(role: str, scripted: Any) -> Any:
    """The real model when configured, else a ScriptedModel answering with ``scripted``."""
    if LIVE:
        return MODEL
    return ScriptedModel(scripted, name=f"scripted-{role}")


# --- tools --------------------------------------------------------------------------
FORECASTS = {"paris": "light rain, 14°C", "tokyo": "sunny, 21°C", "oslo": "snow, -3°C"}


@tool
def get_weather(city: str) -> str:
    """Today's weather forecast for a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    return FORECASTS.get(city.strip().lower(), "no forecast available")


@tool
def convert_temperature(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit.

    Args:
        celsius: Degrees Celsius.
    """
    return round(celsius * 9 / 5 + 32, 1)


def weather_script(request: ModelRequest) -> Any:
    """Offline stand-in for a model: call tools when asked about weather, then answer."""
    last = request.messages[-1]
    if last["role"] == "tool":
        results = [m["content"] for m in request.messages if m["role"] == "tool"]
        return f"Here is what I found: {'; '.join(results)}."
    question = str(last.get("content", ""))
    cities = [c for c in FORECASTS if c in question.lower()]
    if cities:
        return {
            "tool_calls": [
                {"name": "get_weather", "arguments": {"city": c.title()}} for c in cities
            ]
        }
    earlier = [m["content"] for m in request.messages if m["role"] == "user"][:-1]
    return f"Earlier you asked: {earlier[-1]!r}." if earlier else "Hello! Ask me about the weather."


def tour_plugins() -> None:
    section("1. Plugins (lightagent plugins --all)")
    for info in get_host().plugins():
        registered = ", ".join(f"{k}: {'/'.join(v)}" for k, v in info.registered.items()) or "-"
        print(f"  {info.name:<24} {info.version or '':<7} {info.status:<8} {registered}")
        if info.error:
            print(f"      error: {info.error}")


def tour_agent(workdir: Path) -> Any:
    section("2. An agent with tools and a durable SQLite session")
    from lightagent import SqliteSessionStore

    store = SqliteSessionStore(workdir / "sessions.sqlite3")
    agent = LightAgent(
        name="forecaster",
        instructions="You answer weather questions using the tools. Be brief.",
        model=model_for("agent", weather_script),
        tools=[get_weather, convert_temperature],
        session_store=store,
    )
    first = agent.run(
        "What's the weather in Paris and Tokyo?",
        session_id="demo-session",
        result_format="object",
        trace=True,
    )
    show("run 1", first.content)
    show("  tool calls", [f"{c['name']}({c['arguments']})" for c in first.tool_calls])
    second = agent.run("What did I ask you a moment ago?", session_id="demo-session")
    show("run 2 (same session, history from SQLite)", second)
    replay = agent.replay_session("demo-session")
    show("replay of the event log", replay.to_dict())
    return first


def tour_flow(workdir: Path) -> None:
    section("3. LightFlow: research -> {outline, facts} -> write, checkpointed and resumed")
    from lightagent import ModelError
    from lightagent_flow import JsonLightFlowStore, LightFlow

    def agent(name: str, *replies: Any) -> LightAgent:
        return LightAgent(name=name, model=model_for(name, list(replies)))

    store = JsonLightFlowStore(workdir / "flows")
    flow = (
        LightFlow(store=store, retry_backoff=0.01)
        .step("research", agent=agent("research", "Anvils: demand up 12%, mostly coyotes."))
        .step(
            "outline",
            agent=agent("outline", "1. Demand 2. Customers 3. Outlook"),
            depends_on=["research"],
        )
        .step(
            "facts",
            agent=agent("facts", "Fact: 12% growth year over year."),
            depends_on=["research"],
        )
        .step(
            "write",
            agent=agent(
                "write",
                ModelError("LA-503", "provider unavailable"),  # the first attempt fails ...
                "ACME anvils: demand grew 12%, driven by coyotes; outlook steady.",
            ),
            depends_on=["outline", "facts"],
            max_retry=1,
        )
    )
    result = flow.run("Write a short market note on anvils", run_id="note-1")
    show("first run", f"{result.status} ({result.error})" if not result.success else result.status)
    if not result.success:  # ... and resume() finishes it without re-running research/outline/facts
        result = flow.resume("note-1")
    record = flow.get_run("note-1")
    assert record is not None
    steps = record["steps"]
    show("after resume", f"{result.status}: {result.content}")
    show("  attempts per step", {s["name"]: s["attempts"] for s in steps})


def tour_dag(workdir: Path) -> None:
    section("4. LightDAG: a worker proposes, an application-owned verifier publishes")
    from lightagent import PermissionSet, SecurityContext
    from lightagent_dag import (
        CallableVerifier,
        LightDAG,
        LocalArtifactStore,
        SqliteTaskGraphStore,
        TaskOutcome,
        TaskSpec,
    )

    store = SqliteTaskGraphStore(workdir / "dag.sqlite3")
    try:
        dag = LightDAG(
            store=store,
            artifact_store=LocalArtifactStore(workdir / "artifacts"),
            verifiers={
                "is-number": CallableVerifier(
                    "is-number",
                    lambda req: re.fullmatch(rb"-?\d+", req.candidate_content) is not None,
                )
            },
        )
        dag.register_worker("sum", lambda ctx: TaskOutcome.candidate(str(sum(range(10)))))
        dag.register_worker("double", lambda ctx: TaskOutcome.candidate(str(2 * 45)))
        dag.create_run(
            [
                TaskSpec(
                    task_id="sum",
                    goal="sum 0..9",
                    acceptance_contract={"type": "int"},
                    worker_key="sum",
                    verifier_key="is-number",
                ),
                TaskSpec(
                    task_id="double",
                    goal="double it",
                    acceptance_contract={"type": "int"},
                    worker_key="double",
                    verifier_key="is-number",
                    depends_on=("sum",),
                ),
            ],
            run_id="dag-demo",
            context=SecurityContext(
                user_id="demo",
                tenant_id="acme",
                project_id="tour",
                permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
            ),
        )
        result = dag.run("dag-demo")
        show("run", result.status.value)
        for task in dag.list_tasks("dag-demo"):
            show(
                f"  task {task.task_id}",
                task.status.value if hasattr(task.status, "value") else task.status,
            )
    finally:
        store.close()


def tour_mcp() -> None:
    section("5. MCP: an agent calls a real MCP server (mcp-server-time over stdio, offline)")
    import shutil

    command = shutil.which("mcp-server-time") or shutil.which(
        "mcp-server-time", path=str(Path(sys.executable).parent)
    )
    if command is None:
        print("  (skipped: mcp-server-time is not installed; `make setup` installs it)")
        return
    from lightagent_mcp import MCPToolset

    time_server = MCPToolset({"command": command, "args": ["--local-timezone", "UTC"]}, name="time")
    script = [
        {
            "tool_calls": [
                {
                    "name": "convert_time",
                    "arguments": {
                        "source_timezone": "UTC",
                        "time": "12:00",
                        "target_timezone": "Asia/Tokyo",
                    },
                }
            ]
        },
        "Noon in UTC is 21:00 in Tokyo.",
    ]
    with LightAgent(model=model_for("mcp", script), tools=[time_server]) as agent:
        result = agent.run(
            "It is noon in UTC. What time is it in Tokyo?", result_format="object", trace=True
        )
        show("tools from the server", sorted(time_server.definition_hashes))
        show("answer", result.content)
        for event in result.trace:
            if event["type"] == "tool_result":
                show(
                    f"  {event['data']['name']} returned", " ".join(event["data"]["output"].split())
                )
    show("session closed; server process tree ended", time_server.link.pgid is None)


def memory_script(request: ModelRequest) -> str:
    """Offline stand-in: answer from the memories the agent put in the system prompt."""
    system = str(request.messages[0].get("content", ""))
    remembered = [line[2:] for line in system.splitlines() if line.startswith("- ")]
    return f"From memory: {' | '.join(remembered)}" if remembered else "Noted."


def tour_memory(workdir: Path) -> None:
    section("8. Memory that fails closed (a SQLite memory pool, tenants, promotion, mem0)")
    from lightagent import MemoryPolicy, SharedMemoryPool

    pool = SharedMemoryPool(f"sqlite:///{workdir / 'memory.sqlite3'}")
    policy = MemoryPolicy(namespace="acme", min_write_length=8)

    def concierge(tenant: MemoryPolicy) -> LightAgent:
        return LightAgent(
            name="concierge",
            model=model_for("memory", memory_script),
            memory=pool,
            memory_policy=tenant,
            self_learning=True,
        )

    agent = concierge(policy)
    agent.run("Remember: my room is 412 and I drink green tea.", user_id="alice")
    show(
        "acme/alice asks again",
        agent.run("Which room am I in, and what do I drink?", user_id="alice"),
    )
    other = concierge(MemoryPolicy(namespace="globex"))
    show(
        "globex/alice (same user id, other tenant)",
        other.run("Which room am I in?", user_id="alice"),
    )
    refused = agent.run(
        "My card token is sk-live-4242424242424242abcd",
        user_id="alice",
        result_format="object",
        trace=True,
    )
    show(
        "a credential-looking write",
        [e["data"]["reason"] for e in refused.trace if e["type"] == "memory_write_block"],
    )
    pending = agent.list_memory_candidates(include_data=False)
    show("reflections waiting for promotion", len(pending))
    decision = agent.promote_memory_candidate(pending[0]["candidate_id"], "approve")
    show("promoted once", {"action": decision.action, "stored": decision.metadata["stored"]})
    again = agent.promote_memory_candidate(pending[0]["candidate_id"], "approve")
    show("promoting again", {"idempotent": again.metadata["idempotent"]})
    show(
        "records in the pool (acme/alice, the agent's own)",
        [
            len(pool.list_records(user_id=policy.scoped_user_id("alice"))),
            len(pool.list_records(user_id=policy.agent_user_id("concierge"))),
        ],
    )
    pool.close()
    tour_mem0(workdir)


def tour_mem0(workdir: Path) -> None:
    """mem0 (lightagent-memory-mem0) on the loopback server: its LLM and embeddings on 127.0.0.1."""
    try:
        from lightagent_contracts import LoopbackServer
        from lightagent_memory_mem0 import Mem0Memory, echo_facts
    except ImportError:
        show("mem0", "install lightagent-memory-mem0 (and lightagent-contracts) to see mem0 here")
        return
    import logging

    os.environ.setdefault("MEM0_DIR", str(workdir / "mem0-home"))  # keep ~/.mem0 untouched
    logging.getLogger("mem0").setLevel(logging.ERROR)  # its notes on optional extras (spaCy …)
    with LoopbackServer(embedding_dimensions=64) as server:
        server.route("mem0-llm", echo_facts)
        memory = Mem0Memory(
            base_url=server.base_url,
            api_key="offline",
            llm_model="mem0-llm",
            embedding_dims=64,
            path=workdir / "mem0",
        )
        agent = LightAgent(
            name="mem0-concierge",
            model=model_for("mem0", memory_script),
            memory=memory,
            memory_namespace="acme",
        )
        agent.run("My favourite colour is teal.", user_id="bob")
        show("mem0, bob asks again", agent.run("What is my favourite colour?", user_id="bob"))
        found = memory.retrieve("favourite colour", "acme:bob")["results"]
        show("mem0 records of acme/bob", sorted(r["memory"] for r in found))
        show("mem0 sees for acme/eve", memory.retrieve("favourite colour", "acme:eve")["results"])
        show(
            "mem0 calls on the loopback",
            {
                "extraction": sum(r["model"] == "mem0-llm" for r in server.requests),
                "embeddings": len(server.embedding_requests),
            },
        )
        memory.close()


def frontdesk_script(request: ModelRequest) -> Any:
    """Offline frontdesk: hand payment questions to finance (a transfer tool call)."""
    names = {t["function"]["name"] for t in request.tools or ()}
    if "transfer_to_finance" in names and "pay" in str(request.messages[-1].get("content")):
        reason = "a vendor payment approval is a finance question"
        return {"tool_calls": [{"name": "transfer_to_finance", "arguments": {"reason": reason}}]}
    return "I can help with general questions."


def tour_swarm(workdir: Path) -> None:
    section("6. LightSwarm: the frontdesk hands the conversation to finance (a tool call)")
    from lightagent import LightSwarm, SqliteSessionStore

    frontdesk = LightAgent(
        name="frontdesk",
        role="Route requests to the right specialist; hand off payment questions to finance.",
        model=model_for("frontdesk", frontdesk_script),
        session_store=SqliteSessionStore(workdir / "swarm.sqlite3"),
    )
    finance = LightAgent(
        name="finance",
        role="Answer finance approval questions in one sentence.",
        model=model_for(
            "finance", ["Approve it in the ERP under Payables > Approvals, then notify the buyer."]
        ),
    )
    swarm = LightSwarm(max_handoffs=3)
    swarm.register_agent(frontdesk, finance)

    def hook(ctx: Any) -> None:  # every handoff passes on_handoff; a hook may block or edit it
        if ctx.phase == "on_handoff":
            show("  on_handoff", f"{ctx.payload['source_agent']} -> {ctx.payload['target_agent']}")

    frontdesk.hooks.hooks.append(hook)
    result = swarm.run(
        frontdesk,
        "How do I approve a vendor payment?",
        session_id="swarm-session",
        result_format="object",
        trace=True,
    )
    show("answer", result.content)
    for handoff in result.handoffs:
        show(
            "  handoff",
            f"{handoff['source_agent']} -> {handoff['target_agent']}: {handoff['reason']}",
        )
    runs = {e["run_id"]: e["trace_id"] for e in result.trace}
    show("  runs in the chain (one trace, linked by parent_trace_id)", len(runs))
    kinds = [e.type for e in frontdesk.session_binding.store.events("swarm-session")]
    show(
        "  one session log",
        f"{kinds.count('turn.started')} turns, handoff recorded: {'handoff.requested' in kinds}",
    )


def planner_script(request: ModelRequest) -> str:
    """Offline stand-in for the planner and its checker: answers from what it was told."""
    told = " ".join(str(m.get("content", "")) for m in request.messages if m["role"] == "user")
    last = str(request.messages[-1].get("content", ""))
    if last.startswith("Summarize"):
        return "Tests, artifacts, freeze Thursday, publish Friday."
    if "check" in told.lower() and "release plan" not in told.lower():
        return "Checked: the checklist covers tests, artifacts and the freeze."
    freeze = " Code freeze on Thursday, as you asked." if "freeze" in told.lower() else ""
    return f"Release plan: run the tests, build the artifacts, publish on Friday.{freeze}"


def tour_runtime(workdir: Path) -> None:
    section("9. The long-task runtime: a budget, a goal, the inbox, a background job, a subagent")
    import asyncio

    from lightagent import BudgetLimits, SqliteSessionStore, SubagentManager

    store = SqliteSessionStore(workdir / "runtime.sqlite3")
    planner = LightAgent(
        name="planner",
        instructions="You plan software releases. Be brief.",
        model=model_for("planner", planner_script),
        session_store=store,
        budget_limits=BudgetLimits(model_calls=6, per="session"),
    )
    planner.create_goal("release", "Plan the release", acceptance_criteria=["tests", "artifacts"])
    # sent from anywhere that opens the same store; the run takes it in at a step boundary
    planner.send_message("release", "Remember the code freeze on Thursday.", message_id="freeze")
    show("run (goal, inbox)", planner.run("Draft the release plan.", session_id="release"))

    checker = LightAgent(name="checker", model=model_for("checker", planner_script))
    subagents = SubagentManager(store=store, session_id="release", root_agent_id="planner")
    subagents.register(checker, metadata={"description": "reviews plans"})

    async def background() -> tuple[Any, Any]:
        record = planner.start_job("Summarize the plan in one line.", session_id="release")
        checked = await subagents.run("checker", "Check the release checklist.")
        done = await planner.runtime.for_session("release").jobs.wait(record.job_id)
        return done, checked

    done, checked = asyncio.run(background())
    show("background job", f"{done.status.value}: {done.result['content']}")
    show("subagent", f"{checked.status}: {checked.content}")
    state = planner.runtime.for_session("release").snapshot()
    show("goals (from the log)", [(g["objective"], g["status"]) for g in state["goals"]])
    # the job's completion waits in the inbox for the session's next run
    show("inbox", {k: len(v) for k, v in state["inbox"].items() if v})
    used = state["budget"]["used"]
    show(
        "session budget used (the run and the job's run)",
        {k: round(v, 3) for k, v in used.items() if v},
    )


def tour_dbos(workdir: Path) -> None:
    section("10. Durable runs on DBOS: each model request, tool call and job step checkpointed")
    try:
        from dbos import DBOS
        from lightagent_dbos import DBOSAgent, DBOSJobExecutor
    except ImportError:
        print('  skipped: pip install "lightagent-core[dbos]" (see docs/dbos.md)')
        return
    asked: list[Any] = []

    def counted(request: ModelRequest) -> Any:
        asked.append(request)
        return weather_script(request)

    agent = LightAgent(
        name="durable-forecaster", model=model_for("dbos", counted), tools=[get_weather]
    )
    durable = DBOSAgent(agent, name="demo-forecaster")
    jobs_executor = DBOSJobExecutor(name="demo-jobs")  # built before the launch, as durable
    DBOS(
        config={
            "name": "lightagent-demo",
            "system_database_url": f"sqlite:///{workdir / 'dbos.sqlite'}",
            "log_level": "WARNING",
        }
    )
    DBOS.launch()
    try:
        show("run (workflow demo-1)", durable.run("Weather in Oslo?", workflow_id="demo-1"))
        steps = [s["function_name"] for s in DBOS.list_workflow_steps("demo-1")]
        show("  its steps, checkpointed in SQLite", steps)
        before = len(asked)
        again = durable.run("Weather in Oslo?", workflow_id="demo-1")
        show("same workflow id again (from the checkpoint)", again)
        show("  model requests made by the second call", len(asked) - before)
        tour_dbos_job(workdir, jobs_executor)
    finally:
        DBOS.destroy()


def tour_dbos_job(workdir: Path, executor: Any) -> None:
    """A background job as a DBOS workflow: each ledger step a checkpointed step."""
    import asyncio

    from dbos import DBOS
    from lightagent import JobManager, SqliteSessionStore

    async def invoice(ctx: Any) -> dict[str, str]:
        charge = await ctx.step("charge", lambda: f"charged {ctx.arguments['order']}")
        return {"charge": charge, "label": await ctx.step("label", lambda: "L-1")}

    async def main() -> Any:
        store = SqliteSessionStore(workdir / "jobs.sqlite3")
        jobs = JobManager(store, "billing", executor=executor)
        record = jobs.start("invoice", invoice, arguments={"order": "o-7"})
        return await jobs.wait(record.job_id)

    done = asyncio.run(main())
    show("background job on DBOS", {"status": done.status.value, "result": done.result})
    steps = DBOS.list_workflow_steps(executor.workflow_id("billing", done.job_id))
    show("  its workflow's steps", [s["function_name"] for s in steps])


def tour_trace(result: Any) -> None:
    section("7. The trace of run 1 (every event, summarized)")
    print("  " + " -> ".join(event["type"] for event in result.trace))
    summary = summarize_trace(result.trace)
    show("summary", {k: v for k, v in summary.to_dict().items() if v not in (None, {}, [], 0)})


def main() -> int:
    print(
        f"lightagent tour — {'live model ' + MODEL if LIVE else 'offline, on the scripted model'}"
    )
    with tempfile.TemporaryDirectory(prefix="lightagent-demo-") as tmp:
        workdir = Path(tmp)
        tour_plugins()
        first = tour_agent(workdir)
        tour_flow(workdir)
        tour_dag(workdir)
        tour_mcp()
        tour_swarm(workdir)
        tour_trace(first)
        tour_memory(workdir)
        tour_runtime(workdir)
        tour_dbos(workdir)
    print(
        "\nDone. Next: docs/agent.md, docs/sessions.md, docs/flow.md, docs/dag.md, docs/mcp.md, "
        "docs/swarm.md, docs/memory.md, docs/runtime.md, docs/dbos.md"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
