"""examples/hello_world.py, tool_example.py, streaming.py and typed_results.py run, offline and against the loopback server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def run_example(name: str, env_extra: dict[str, str]) -> str:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "LIGHTAGENT_BASE_URL", "OPENAI_BASE_URL")
    }
    env.update(env_extra)
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


@pytest.mark.parametrize(
    "name", ["hello_world.py", "tool_example.py", "streaming.py", "typed_results.py"]
)
def test_examples_run_offline(name: str) -> None:
    assert run_example(name, {}).strip()


def test_examples_against_the_loopback_server(loopback_server) -> None:
    env = {"LIGHTAGENT_BASE_URL": loopback_server.base_url, "OPENAI_API_KEY": "test"}
    loopback_server.reply("Hi, I am served over HTTP.")
    assert run_example("hello_world.py", env).strip() == "Hi, I am served over HTTP."

    loopback_server.reply(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city_name": "Shanghai"}}]},
        "Shanghai is sunny today.",
    )
    assert run_example("tool_example.py", env).strip() == "Shanghai is sunny today."
    assert (
        loopback_server.requests[-1]["messages"][-1]["content"]
        == "Query result: Shanghai is sunny."
    )

    loopback_server.reply("A streamed report.", "A streamed report.")
    out = run_example("streaming.py", env)
    assert out.count("A streamed report.") == 2
    assert all(body.get("stream") for body in loopback_server.requests[-2:])
    loopback_server.assert_exhausted()
