"""Overhead of a ``LightSwarm`` handoff over the raw ``openai`` SDK making the same two calls.

The chain: the frontdesk model calls ``transfer_to_finance``; finance answers. Both sides
send the same two requests (bodies of the same shape, tools included) to the same loopback
OpenAI-wire server, run in its own process:

* **raw SDK**: ``client.chat.completions.create`` twice (typed responses), the usual floor;
* **raw SDK, dicts**: the same via ``client.post(..., cast_to=object)`` (the transport
  ``OpenAIModel`` uses), so its ratio is the swarm's own overhead;
* **LightSwarm**: ``swarm.run(frontdesk, query)``.

Runs are interleaved. Also: the chain alone, on an in-process model (no HTTP), against two
plain runs. Run: ``.venv/bin/python bench/bench_swarm.py [iterations]``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = "gpt-4.1"
QUERY = "How do I approve a vendor payment?"
FRONT = "You are a helpful agent.\nRoute requests."
FINANCE = "You are a helpful agent.\nAnswer finance questions."
ANSWER = "Approve it in the ERP under Payables > Approvals."

SERVER = r"""
import sys
from lightagent_contracts.loopback import LoopbackServer

def reply(body):
    if body["messages"][0]["content"].endswith("Route requests."):
        return {"tool_calls": [{"name": "transfer_to_finance", "arguments": {"reason": "payments"}}]}
    return "Approve it in the ERP under Payables > Approvals."

server = LoopbackServer(default=reply).start()
print(server.base_url, flush=True)
sys.stdin.read()
server.stop()
"""


def transfer_tool(name: str) -> dict:
    return {
        "type": "function",
        "function": {
            "name": f"transfer_to_{name}",
            "description": f"Hand the conversation over to the agent {name!r}.",
            "parameters": {
                "type": "object",
                "properties": {"reason": {"type": "string"}},
                "required": ["reason"],
            },
        },
    }


def raw_sides(base_url: str) -> dict[str, Callable[[], str]]:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="bench", max_retries=0)

    def typed() -> str:
        first = client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "system", "content": FRONT}, {"role": "user", "content": QUERY}],
            tools=[transfer_tool("finance")],
        )
        assert first.choices[0].message.tool_calls
        second = client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "system", "content": FINANCE}, {"role": "user", "content": QUERY}],
            tools=[transfer_tool("frontdesk")],
        )
        return second.choices[0].message.content or ""

    def dicts() -> str:
        first = client.post(
            "/chat/completions",
            body={
                "model": MODEL,
                "messages": [
                    {"role": "system", "content": FRONT},
                    {"role": "user", "content": QUERY},
                ],
                "tools": [transfer_tool("finance")],
            },
            cast_to=object,
        )
        assert first["choices"][0]["message"]["tool_calls"]
        second = client.post(
            "/chat/completions",
            body={
                "model": MODEL,
                "messages": [
                    {"role": "system", "content": FINANCE},
                    {"role": "user", "content": QUERY},
                ],
                "tools": [transfer_tool("frontdesk")],
            },
            cast_to=object,
        )
        return str(second["choices"][0]["message"]["content"])

    return {"raw": typed, "dicts": dicts}


def swarm_side(base_url: str) -> Callable[[], str]:
    from lightagent import LightAgent, LightSwarm

    front = LightAgent(
        name="frontdesk", role="Route requests.", model=MODEL, api_key="bench", base_url=base_url
    )
    finance = LightAgent(
        name="finance",
        role="Answer finance questions.",
        model=MODEL,
        api_key="bench",
        base_url=base_url,
    )
    swarm = LightSwarm()
    swarm.register_agent(front, finance)
    return lambda: swarm.run(front, QUERY)


def timed(fn: Callable[[], str]) -> float:
    started = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - started
    assert out == ANSWER, out
    return elapsed * 1000


def in_process(iterations: int) -> tuple[float, float]:
    from lightagent import LightAgent, LightSwarm, ScriptedModel

    transfer = {"tool_calls": [{"name": "transfer_to_finance", "arguments": {"reason": "x"}}]}
    front = LightAgent(name="frontdesk", model=ScriptedModel(lambda r: transfer))
    finance = LightAgent(name="finance", model=ScriptedModel(lambda r: "ok"))
    swarm = LightSwarm()
    swarm.register_agent(front, finance)
    plain_a = LightAgent(name="a", model=ScriptedModel(lambda r: "ok"))
    plain_b = LightAgent(name="b", model=ScriptedModel(lambda r: "ok"))
    chain, pair = [], []
    for _ in range(iterations):
        t0 = time.perf_counter()
        swarm.run(front, QUERY)
        t1 = time.perf_counter()
        plain_a.run(QUERY)
        plain_b.run(QUERY)
        t2 = time.perf_counter()
        chain.append((t1 - t0) * 1e6)
        pair.append((t2 - t1) * 1e6)
    return statistics.median(chain), statistics.median(pair)


def main() -> int:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    base_url = proc.stdout.readline().strip() if proc.stdout else ""
    try:
        sides = {**raw_sides(base_url), "swarm": swarm_side(base_url)}
        for fn in sides.values():  # warm-up: connections, imports, caches
            for _ in range(20):
                timed(fn)
        times: dict[str, list[float]] = {name: [] for name in sides}
        names = list(sides)
        for i in range(iterations):
            order = names if i % 2 == 0 else list(reversed(names))
            for name in order:
                times[name].append(timed(sides[name]))
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=10)
    chain_us, pair_us = in_process(2000)

    def cell(name: str) -> str:
        values = sorted(times[name])
        return f"{statistics.median(values):.3f} / {values[int(len(values) * 0.9)]:.3f}"

    def ratio(name: str, floor: str) -> str:
        a, b = sorted(times[name]), sorted(times[floor])
        p90 = int(len(a) * 0.9)
        return f"{statistics.median(a) / statistics.median(b):.3f}x / {a[p90] / b[p90]:.3f}x"

    load = os.getloadavg()[0]
    import openai

    text = f"""## LightSwarm handoff overhead over the raw openai SDK

{iterations} interleaved chains after warm-up; loopback OpenAI-wire server in its own process on
127.0.0.1; sync `openai.OpenAI` {openai.__version__} client; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs,
load average {load:.1f} when it ended. A chain is two HTTP calls (frontdesk calls
`transfer_to_finance`, finance answers). Wall time per chain in ms, median / p90.

| chain | raw SDK | raw SDK, dicts | LightSwarm | ratio to raw SDK | ratio to raw SDK, dicts |
|---|---:|---:|---:|---:|---:|
| frontdesk -> finance | {cell("raw")} | {cell("dicts")} | {cell("swarm")} | {ratio("swarm", "raw")} | {ratio("swarm", "dicts")} |

In process (an instant scripted model, no HTTP), median: the two-hop chain {chain_us:.1f} µs,
two plain runs {pair_us:.1f} µs — the handoff (transfer tools for the hop, the route check,
the `on_handoff` step, the second spec) costs {chain_us - pair_us:.1f} µs per chain.
"""
    (HERE / "results" / "swarm.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
