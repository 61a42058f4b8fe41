"""lightagent next to the PyPI ``lightagent==0.11.0`` (the framework this project re-creates).

Each framework runs in its own virtual environment against the same loopback OpenAI-wire
server (its own process), and is compared with the raw ``openai`` SDK **of that same
environment** making the same calls, interleaved run by run. So each ratio is "what the
framework adds over its own SDK", comparable across environments. The 0.11.0 wheel is
installed into ``bench/.work/venv-la011`` on first run; if that fails the rows say so.

Run: ``.venv/bin/python bench/bench_peers.py [iterations]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from la011 import la011_python

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"

SERVER = r"""
import sys
from lightagent_contracts.loopback import LoopbackServer

def reply(body):
    last = body["messages"][-1]
    if last["role"] == "tool":
        return "The weather: " + str(last["content"])[:80]
    names = [t["function"]["name"] for t in body.get("tools") or ()]
    if "get_weather" in names:
        return {"tool_calls": [{"name": "get_weather", "arguments": {"city_name": "Shanghai"}}]}
    return "Hello! I am a helpful agent. How can I help you today?"

server = LoopbackServer(default=reply).start()
print(server.base_url, flush=True)
sys.stdin.read()
server.stop()
"""

# Runs inside each environment: raw SDK vs the framework, interleaved.
CHILD = r"""
import json, statistics, sys, time, os
base_url, impl, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3])
import openai
client = openai.OpenAI(base_url=base_url, api_key="sk-bench")

def get_weather(city_name: str) -> str:
    return f"Query result: {city_name} is sunny."

TOOL_SCHEMA = [{"type": "function", "function": {"name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city_name": {"type": "string",
    "description": "The city."}}, "required": ["city_name"]}}}]

def raw_plain():
    r = client.chat.completions.create(model="gpt-4.1", messages=[
        {"role": "system", "content": "You are a helpful agent."},
        {"role": "user", "content": "Hello, who are you?"}])
    return r.choices[0].message.content

def raw_tool():
    messages = [{"role": "system", "content": "You are a helpful agent."},
                {"role": "user", "content": "Please check the weather in Shanghai."}]
    r = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=TOOL_SCHEMA)
    msg = r.choices[0].message
    messages.append(msg.model_dump(exclude_none=True))
    for call in msg.tool_calls:
        out = get_weather(**json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": out})
    r = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=TOOL_SCHEMA)
    return r.choices[0].message.content

if impl == "lightagent":
    from lightagent import LightAgent, tool
    weather = tool(get_weather, description="Get the current weather for a city.")
    plain_agent = LightAgent(model="gpt-4.1", base_url=base_url, api_key="sk-bench")
    tool_agent = LightAgent(model="gpt-4.1", base_url=base_url, api_key="sk-bench", tools=[weather])
else:
    os.chdir(sys.argv[4])  # 0.11 writes ./logs on construction
    from LightAgent import LightAgent
    get_weather.tool_info = {"tool_name": "get_weather", "tool_description": "Get the current weather for a city.",
        "tool_params": [{"name": "city_name", "description": "The city.", "type": "string", "required": True}]}
    plain_agent = LightAgent(model="gpt-4.1", base_url=base_url, api_key="sk-bench")
    tool_agent = LightAgent(model="gpt-4.1", base_url=base_url, api_key="sk-bench", tools=[get_weather])

def ours_plain():
    return plain_agent.run("Hello, who are you?")

def ours_tool():
    return tool_agent.run("Please check the weather in Shanghai.")

out = {}
for name, raw, ours in (("plain", raw_plain, ours_plain), ("tool", raw_tool, ours_tool)):
    for _ in range(20):
        raw(); ours()
    a, b = [], []
    for i in range(iterations):
        pair = ((raw, a), (ours, b)) if i % 2 else ((ours, b), (raw, a))
        for fn, sink in pair:
            t = time.perf_counter(); fn(); sink.append(time.perf_counter() - t)
    out[name] = {"raw_ms": statistics.median(a) * 1000, "framework_ms": statistics.median(b) * 1000}
print(json.dumps(out))
"""


def _measure(python: str, base_url: str, impl: str, iterations: int) -> dict | str:
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run(
            [python, "-c", CHILD, base_url, impl, str(iterations), cwd],
            capture_output=True,
            text=True,
            timeout=900,
        )
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        base_url = server.stdout.readline().strip()
        results = {
            "lightagent 0.1.0 (this repo)": _measure(
                sys.executable, base_url, "lightagent", iterations
            )
        }
        old = la011_python()
        results["LightAgent 0.11.0 (PyPI)"] = (
            _measure(old, base_url, "la011", iterations) if old else "not measured: install failed"
        )
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    lines = [
        "## Agent loop next to LightAgent 0.11.0\n",
        f"Median per-run wall time over {iterations} interleaved runs per scenario, each framework "
        "against the raw `openai` SDK of its own environment on the same loopback server "
        "(`bench/bench_peers.py`). Ratio = framework / raw SDK; lower is better.\n",
        "| framework | scenario | raw SDK ms | framework ms | ratio |",
        "|---|---|---:|---:|---:|",
    ]
    for label, res in results.items():
        if isinstance(res, str):
            lines.append(f"| {label} | all | | | {res} |")
            continue
        for scenario, row in res.items():
            ratio = row["framework_ms"] / row["raw_ms"]
            lines.append(
                f"| {label} | {scenario} | {row['raw_ms']:.2f} | {row['framework_ms']:.2f} | {ratio:.2f}x |"
            )
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "peers.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
