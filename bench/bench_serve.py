"""``lightagent serve`` throughput and latency, against calling the same agent in-process.

A loopback OpenAI-wire model server runs in its own process (as in ``bench_agent.py``);
``lightagent serve`` runs in another, serving one agent on that model. A client in this
process sends N requests with C in flight at once through the official ``openai``
``AsyncOpenAI`` client, non-streamed and streamed; the in-process side awaits
``agent.arun`` (or iterates ``agent.astream``) on the same model with the same
concurrency. The table gives requests per second and per-request latency p50 / p95.
Run: ``.venv/bin/python bench/bench_serve.py [requests]``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_agent import ANSWER, start_server  # noqa: E402

KEY = "bench-serve-key-0123456789"
APP = """
import os
from lightagent import LightAgent
agent = LightAgent(name="bench", model="gpt-4.1", api_key="bench", base_url=os.environ["UPSTREAM"])
"""


def start_serve(upstream: str, folder: str) -> tuple[subprocess.Popen, str]:
    Path(folder, "bench_app.py").write_text(textwrap.dedent(APP))
    env = {**os.environ, "UPSTREAM": upstream, "LIGHTAGENT_SERVE_API_KEY": KEY}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lightagent.cli",
            "serve",
            "bench_app:agent",
            "--port",
            "0",
            "--app-dir",
            folder,
            "--log-level",
            "warning",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        raise SystemExit(f"lightagent serve did not start: {line!r}")
    return proc, line.split()[2]


async def drive(
    call: Callable[[int], Awaitable[str]], total: int, concurrency: int
) -> tuple[float, list[float]]:
    """Run ``total`` calls, ``concurrency`` at once; returns (seconds, latencies)."""
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(i: int) -> None:
        async with gate:
            start = time.perf_counter()
            text = await call(i)
            latencies.append(time.perf_counter() - start)
            assert text == ANSWER, text[:80]

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(total)))
    return time.perf_counter() - start, latencies


async def measure(
    base_url: str, upstream: str, total: int
) -> list[tuple[str, int, str, float, list[float]]]:
    import openai
    from lightagent import LightAgent

    client = openai.AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=0, timeout=120)
    agent = LightAgent(name="bench", model="gpt-4.1", api_key="bench", base_url=upstream)
    messages = [{"role": "user", "content": "Hello, who are you?"}]

    async def served(i: int) -> str:
        reply = await client.chat.completions.create(model="bench", messages=messages)
        return reply.choices[0].message.content

    async def served_stream(i: int) -> str:
        stream = await client.chat.completions.create(model="bench", messages=messages, stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async def local(i: int) -> str:
        return await agent.arun("Hello, who are you?")

    async def local_stream(i: int) -> str:
        parts = []
        async for chunk in agent.astream("Hello, who are you?"):
            parts.append(chunk["choices"][0]["delta"].get("content") or "")
        return "".join(parts)

    sides = [
        ("in-process `agent.arun`", local),
        ("`lightagent serve`", served),
        ("in-process `agent.astream`", local_stream),
        ("`lightagent serve`, streamed", served_stream),
    ]
    rows = []
    for concurrency in (1, 16):
        for label, fn in sides:
            await drive(fn, max(20, total // 10), concurrency)  # warm-up
            seconds, lat = await drive(fn, total, concurrency)
            rows.append(
                (label, concurrency, "stream" if "stream" in label else "plain", seconds, lat)
            )
            print(f"{label} c={concurrency}: {total / seconds:.0f} req/s", flush=True)
    await client.close()
    return rows


def busy_note(load: float) -> list[str]:
    """A warning line when the machine was oversubscribed while measuring."""
    cpus = os.cpu_count() or 1
    if load <= cpus:
        return []
    return [
        f"**Measured on an oversubscribed machine** (load average {load:.1f} on {cpus} CPUs): "
        "absolute times are inflated several-fold; read the ratios, and rerun `make bench` on "
        "a quiet machine for absolute figures.\n",
    ]


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    model_proc, upstream = start_server()
    with tempfile.TemporaryDirectory() as folder:
        serve_proc, base_url = start_serve(upstream, folder)
        try:
            rows = asyncio.run(measure(base_url, upstream, total))
        finally:
            serve_proc.send_signal(signal.SIGTERM)
            serve_proc.wait(timeout=30)
            model_proc.stdin.close()
            model_proc.wait(timeout=10)
    import openai
    import starlette
    import uvicorn

    load = os.getloadavg()[0]
    lines = [
        "## `lightagent serve` against the agent in-process\n",
        f"{total} requests per row after warm-up, C in flight at once, answered by the loopback "
        "OpenAI-wire model server (its own process); `lightagent serve` in a third process "
        f"(uvicorn {uvicorn.__version__}, Starlette {starlette.__version__}); client: `openai` "
        f"{openai.__version__} `AsyncOpenAI`; {os.cpu_count()} CPUs shared by all three processes, "
        f"load average {load:.1f} when it ended. Latency per request in ms.\n",
        *busy_note(load),
        "| side | C | req/s | p50 ms | p95 ms | req/s vs in-process |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    base: dict[tuple[int, str], float] = {}
    for label, concurrency, kind, seconds, lat in rows:
        rate = total / seconds
        if label.startswith("in-process"):
            base[(concurrency, kind)] = rate
        ratio = rate / base[(concurrency, kind)]
        q = statistics.quantiles(lat, n=20)
        lines.append(
            f"| {label} | {concurrency} | {rate:.0f} | {statistics.median(lat) * 1000:.1f} | "
            f"{q[-1] * 1000:.1f} | {ratio:.2f}x |"
        )
    lines += [
        "",
        "Serving adds one HTTP hop (the client's request and the server's response, JSON or",
        "SSE) and Starlette's routing to each run; with several requests in flight the served",
        "side also shares the 2 cores with the client and the model server.",
    ]
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "serve.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
