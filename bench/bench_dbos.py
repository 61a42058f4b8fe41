"""The overhead of a durable agent run on DBOS over a plain one, next to pydantic-ai's.

One run = a model request that asks for a tool, the tool, a second model request that
answers: the common shape of an agent turn. The model is the loopback OpenAI-wire server
on 127.0.0.1 (both frameworks talk to it through the real ``openai`` SDK), so what is
measured is each framework's own cost plus, for the durable runs, DBOS's checkpoints
(the workflow's start and end, three steps). Every variant runs once per round, in turn,
so load hits them alike; the table gives medians.

Variants: lightagent ``LightAgent.run`` and ``DBOSAgent.run``; pydantic-ai
``Agent.run_sync`` and its ``DBOSAgent.run_sync`` when ``pydantic-ai-slim[openai,dbos]``
is installed (it is not a dev requirement: ``pip install "pydantic-ai-slim[openai,dbos]"``).
The durable ones run on a SQLite system database, then on PostgreSQL when one answers
on 127.0.0.1:5432.
Run: ``.venv/bin/python bench/bench_dbos.py``.
"""

from __future__ import annotations

import logging
import os
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROUNDS = int(os.environ.get("BENCH_DBOS_ROUNDS", "40"))
WARMUP = 3
ADMIN = os.environ.get("LIGHTAGENT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def get_weather(city: str) -> str:
    """The weather in ``city``."""
    return f"{city}: sunny, 21C"


def answer(body: dict[str, Any]) -> Any:
    if body["messages"][-1]["role"] == "tool":
        return "It is sunny in Oslo."
    return {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]}


def lightagent_variants(base_url: str) -> dict[str, Callable[[], Any]]:
    from lightagent import LightAgent
    from lightagent_dbos import DBOSAgent

    agent = LightAgent(model="gpt-4.1", api_key="bench", base_url=base_url, tools=[get_weather])
    durable = DBOSAgent(agent, name="bench")
    marked = DBOSAgent(agent, name="bench_idempotent", idempotent_tools=["get_weather"])
    return {
        "lightagent plain": lambda: agent.run("Weather in Oslo?"),
        "lightagent DBOSAgent": lambda: durable.run(
            "Weather in Oslo?", workflow_id=uuid.uuid4().hex
        ),
        # an idempotent tool needs no start mark: the mark's cost is the difference
        "lightagent DBOSAgent, idempotent tool": lambda: marked.run(
            "Weather in Oslo?", workflow_id=uuid.uuid4().hex
        ),
    }


def pydantic_ai_variants(base_url: str) -> dict[str, Callable[[], Any]]:
    try:
        from dbos import SetWorkflowID
        from pydantic_ai import Agent
        from pydantic_ai.durable_exec.dbos import DBOSAgent
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
    except ImportError:
        return {}
    model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(base_url=base_url, api_key="bench"))
    agent = Agent(model, name="bench_pai", tools=[get_weather])
    with warnings.catch_warnings():  # its DBOSAgent is deprecated for a capability: same steps
        warnings.simplefilter("ignore")
        durable = DBOSAgent(agent)

    def durable_run() -> Any:
        with SetWorkflowID(uuid.uuid4().hex):
            return durable.run_sync("Weather in Oslo?")

    return {
        "pydantic-ai plain": lambda: agent.run_sync("Weather in Oslo?"),
        "pydantic-ai DBOSAgent": durable_run,
    }


def measure(variants: dict[str, Callable[[], Any]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(WARMUP):
        for run in variants.values():
            run()
    for _ in range(ROUNDS):
        for name, run in variants.items():
            t0 = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - t0) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def postgres_url() -> tuple[str | None, str]:
    try:
        import psycopg

        with psycopg.connect(ADMIN, autocommit=True, connect_timeout=3) as conn:
            name = f"la_bench_dbos_{uuid.uuid4().hex[:8]}"
            conn.execute(f'CREATE DATABASE "{name}"')
        return ADMIN.rsplit("/", 1)[0] + f"/{name}", name
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"


def drop(name: str) -> None:
    import psycopg

    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    logging.disable(logging.INFO)
    from dbos import DBOS
    from lightagent_contracts.loopback import LoopbackServer

    rows: list[tuple[str, dict[str, float] | str]] = []
    with LoopbackServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.route("gpt-4.1", answer)
        variants = {**lightagent_variants(server.base_url), **pydantic_ai_variants(server.base_url)}
        pg, pg_name = postgres_url()
        backends = [("SQLite", f"sqlite:///{Path(tmp) / 'dbos.sqlite'}")]
        if pg is not None:
            backends.append(("PostgreSQL", pg))
        else:
            rows.append(("PostgreSQL", f"skipped: {pg_name}"))
        for label, url in backends:
            DBOS(config={"name": "bench-dbos", "system_database_url": url, "log_level": "ERROR"})
            DBOS.launch()
            try:
                rows.append((label, measure(variants)))
            finally:
                DBOS.destroy()
        if pg is not None:
            drop(pg_name)
    have_pai = any(name.startswith("pydantic-ai") for name in variants)
    from importlib.metadata import version

    pai = f", pydantic-ai-slim {version('pydantic-ai-slim')}" if have_pai else ""
    lines = [
        "## Durable agent runs on DBOS against plain runs\n",
        "`bench/bench_dbos.py` — median ms of one agent run (a tool call, the tool, an answer: "
        "two model requests) on the loopback OpenAI-wire server, "
        f"{ROUNDS} rounds after {WARMUP} warm-up rounds, every variant once per round in turn. "
        "Durable = the run is a DBOS workflow and each model request and tool call a "
        f"checkpointed step. dbos {version('dbos')}{pai}, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} when it ended.\n",
        "What is checkpointed differs: lightagent makes every tool call a step (and, for a "
        "tool not declared idempotent, first writes a start mark so a crash inside it is "
        "never followed by a blind re-run); pydantic-ai's DBOSAgent checkpoints model requests "
        "and MCP calls, while a plain function tool runs inside the workflow and runs again "
        "on recovery. The figure to compare is the time durability adds (durable minus plain, "
        "same framework): the ratios also reflect how cheap each framework's plain run is.\n",
        "| system database | variant | median ms | added by durability, ms | durable / plain |",
        "|---|---|---:|---:|---:|",
    ]
    if not have_pai:
        lines.insert(2, "pydantic-ai is not installed here: its rows are missing.\n")
    for label, res in rows:
        if isinstance(res, str):
            lines.append(f"| {label} | {res} | | | |")
            continue
        for name, ms in res.items():
            plain = res.get(name.split(" DBOSAgent")[0] + " plain")
            durable = plain is not None and "DBOSAgent" in name
            added = f"{ms - plain:.1f}" if durable and plain is not None else ""
            ratio = f"{ms / plain:.2f}x" if durable and plain else ""
            lines.append(
                f"| {label} | {name} | {ms:.2f} | **{added}** | {ratio} |".replace(
                    "| **** |", "| |"
                )
            )
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "dbos.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
