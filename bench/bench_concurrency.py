"""Concurrent tool runs in one event loop under model latency, next to the raw ``openai`` SDK.

The loopback OpenAI-wire server runs in its own process and answers every request after
``latency`` seconds (a model's think time). C runs are in flight at once in one asyncio
event loop: C tasks, each doing ``per_task`` tool runs one after another (a completion
that asks for a tool, the Python function, a second completion with its result). Both
sides use one ``openai.AsyncOpenAI`` client each, with the SDK's default connection pool:

* **raw SDK** (the floor): ``await client.chat.completions.create(...)`` twice per run;
* **LightAgent**: ``await agent.arun(query)`` of one agent instance shared by every run.

Blocks alternate between the sides (raw, ours, ours, raw, …) after a warm-up block each
that opens the connections; the figure is runs per second over a block, median of the
blocks. Run: ``.venv/bin/python bench/bench_concurrency.py [rounds]``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = "gpt-4.1"
SYSTEM = "You are a helpful agent."
QUERY = "Please check the weather in Shanghai."
#: (model latency in seconds, runs in flight, runs per task per block)
CASES = [(0.05, 100, 6), (0.05, 1000, 2), (0.0, 100, 10)]

SERVER = r"""
import sys, time
from lightagent_contracts.loopback import LoopbackServer

latency = float(sys.argv[1])

def reply(body):
    if latency:
        time.sleep(latency)  # on the connection's own handler thread
    last = body["messages"][-1]
    if last["role"] == "tool":
        return "The weather: " + last["content"]
    return {"tool_calls": [{"name": "get_weather", "arguments": {"city_name": "Shanghai"}}]}

server = LoopbackServer(default=reply).start()
print(server.base_url, flush=True)
sys.stdin.read()
server.stop()
"""

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get current weather information for the specified city.",
            "parameters": {
                "type": "object",
                "properties": {"city_name": {"type": "string", "description": "The city"}},
                "required": ["city_name"],
            },
        },
    }
]


def get_weather(city_name: str) -> str:
    """Get current weather information for the specified city.

    Args:
        city_name: The city.
    """
    return f"Query result: {city_name} is sunny."


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    if not base_url.startswith("http"):
        proc.kill()
        raise SystemExit("the loopback server did not start")
    return proc, base_url


def raw_run(client: object) -> Callable[[], Awaitable[str]]:
    async def run() -> str:
        create = client.chat.completions.create  # type: ignore[attr-defined]
        messages: list[dict] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": QUERY},
        ]
        first = (await create(model=MODEL, messages=messages, tools=TOOLS)).choices[0].message
        messages.append(first.model_dump(exclude_none=True))
        for call in first.tool_calls or ():
            output = get_weather(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        second = await create(model=MODEL, messages=messages, tools=TOOLS)
        return second.choices[0].message.content

    return run


def our_run(base_url: str) -> Callable[[], Awaitable[str]]:
    from lightagent import LightAgent

    agent = LightAgent(model=MODEL, api_key="bench", base_url=base_url, tools=[get_weather])

    async def run() -> str:
        return await agent.arun(QUERY)

    return run


FAILED: dict[str, int] = {}


async def block(
    run: Callable[[], Awaitable[str]], concurrency: int, per_task: int, side: str = ""
) -> float:
    """Completed runs per second with ``concurrency`` runs in flight; failed runs are counted."""
    done = 0

    async def task() -> None:
        nonlocal done
        for _ in range(per_task):
            try:
                answer = await run()
            except Exception as exc:  # a connect timeout of an overloaded pool, say
                key = f"{side}: {type(exc).__name__}"
                FAILED[key] = FAILED.get(key, 0) + 1
                continue
            assert answer.startswith("The weather"), answer
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(task() for _ in range(concurrency)))
    return done / (time.perf_counter() - start)


async def measure(
    base_url: str, concurrency: int, per_task: int, rounds: int
) -> dict[str, list[float]]:
    import openai

    # OpenAIModel's default timeouts (60 s, 10 s to connect): the SDK's 5 s connect timeout
    # would fail connections that wait behind a thousand others for the event loop.
    timeout = openai.Timeout(60.0, connect=10.0)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0, timeout=timeout)
    sides = {"raw": raw_run(client), "ours": our_run(base_url)}
    for name, run in sides.items():  # warm-up: open the pool's connections, fill caches
        await block(run, concurrency, 1, name)
    rates: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(rounds):
        order = ["raw", "ours"] if i % 2 == 0 else ["ours", "raw"]
        for name in order:
            rates[name].append(await block(sides[name], concurrency, per_task, name))
    await client.close()
    return rates


def main() -> None:
    import openai

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    rows = []
    for latency, concurrency, per_task in CASES:
        proc, base_url = start_server(latency)
        try:
            rates = asyncio.run(measure(base_url, concurrency, per_task, rounds))
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=30)
        raw, ours = statistics.median(rates["raw"]), statistics.median(rates["ours"])
        failed = ", ".join(f"{k} x{v}" for k, v in sorted(FAILED.items())) or "none"
        FAILED.clear()
        rows.append(
            (latency, concurrency, raw, ours, min(rates["raw"]), min(rates["ours"]), failed)
        )
        print(
            f"latency {latency * 1000:.0f} ms, {concurrency} in flight: raw {raw:.0f} runs/s, "
            f"ours {ours:.0f} runs/s ({ours / raw:.2f}x)",
            flush=True,
        )
    load = os.getloadavg()[0]
    ideal = "the ideal with latency L is C / (2 L): two model calls per run"
    lines = [
        "## Concurrent tool runs under model latency\n",
        f"`bench/bench_concurrency.py` — C tool runs in flight in one asyncio event loop against the "
        f"loopback OpenAI-wire server in its own process, which answers each request after the model "
        f"latency; `openai` {openai.__version__} `AsyncOpenAI` with the SDK's default pool on both "
        f"sides (OpenAIModel's default timeouts: 60 s, 10 s to connect), one LightAgent instance for every run. Runs per second over a block of C x k runs, "
        f"median of {rounds} alternating blocks per side (worst block in brackets); {ideal}. "
        f"Ratio = LightAgent / raw SDK runs/s: **higher is better here**, 1.00x or more meets the goal. "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f} when it ended.\n",
        "| model latency | runs in flight | raw SDK runs/s | LightAgent runs/s | ratio | failed runs (warm-up included) |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for latency, concurrency, raw, ours, raw_min, ours_min, failed in rows:
        ratio = f"{ours / raw:.2f}x" if raw else "raw SDK completed none"
        lines.append(
            f"| {latency * 1000:.0f} ms | {concurrency:,} | {raw:.0f} ({raw_min:.0f}) | "
            f"{ours:.0f} ({ours_min:.0f}) | {ratio} | {failed} |"
        )
    lines += [
        "",
        "Both sides share the machine's 2 cores with the server process, so past a few hundred",
        "runs in flight the figure is the CPU cost per run (HTTP client, JSON, the loop), not the",
        "latency: the side that spends less CPU per run gets more runs through.",
    ]
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "concurrency.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
