"""`make demo` runs offline on the scripted model, and live against an OpenAI-wire endpoint."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lightagent_contracts.loopback import LoopbackServer

DEMO = Path(__file__).resolve().parents[3] / "examples" / "demo.py"


def _run(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIGHTAGENT_", "OPENAI_"))}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, str(DEMO)], capture_output=True, text=True, env=env, timeout=180
    )


def test_demo_offline() -> None:
    proc = _run({})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "offline, on the scripted model" in out
    assert "light rain, 14°C; sunny, 21°C" in out  # tools ran
    assert "Earlier you asked" in out  # the session history came back from SQLite
    assert re.search(r'"completed_turns":\s*\["run_\w+", "run_\w+"\]', out)  # two runs' ids
    assert "after resume: success" in out
    assert '"research": 1' in out  # resume did not re-run the finished step
    assert "run: succeeded" in out and "task double: verified" in out
    assert "run_start -> model_request" in out
    assert "acme/alice asks again: From memory: Remember: my room is 412" in out
    assert "globex/alice (same user id, other tenant): Noted." in out  # no memory crossed
    assert 'a credential-looking write: ["secret"' in out
    assert '"idempotent": true' in out
    assert "mem0, bob asks again: From memory: My favourite colour is teal." in out
    assert "mem0 sees for acme/eve: []" in out
    assert "handoff: frontdesk -> finance" in out  # the two-agent LightSwarm handoff
    assert "2 turns, handoff recorded: True" in out
    assert "Code freeze" in out  # the inbox message reached the run
    assert 'goals (from the log): [["Plan the release", "completed"]]' in out
    assert "background job: success: Tests, artifacts" in out
    assert "subagent: completed: Checked:" in out
    assert '"model_calls": 2' in out  # the session budget counts the job's run too
    # a durable run on DBOS, asked again under its workflow id, answered from the checkpoint
    assert "model requests made by the second call: 0" in out or "lightagent-core[dbos]" in out
    assert "Traceback" not in proc.stderr
    assert "\033[" not in out  # stdout is a pipe: no colour codes
    assert "\n== 1. " in out


def _plain_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}


def _heading_on_a_terminal(env_extra: dict[str, str]) -> bytes:
    """What the demo's ``section()`` writes to a real pseudo-terminal."""
    env = {**_plain_env(), **env_extra}
    code = f"import sys; sys.path.insert(0, {str(DEMO.parent)!r}); import demo; demo.section('T')"
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        os.close(follower)
        follower = -1
        out = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)


def test_demo_colours_only_a_terminal_without_no_color() -> None:
    assert b"\033[1m== T\033[0m" in _heading_on_a_terminal({})
    plain = _heading_on_a_terminal({"NO_COLOR": "1"})
    assert b"== T" in plain and b"\033[" not in plain
    # FORCE_COLOR asks for colour even into a pipe; NO_COLOR still wins over it.
    code = f"import sys; sys.path.insert(0, {str(DEMO.parent)!r}); import demo; demo.section('T')"
    forced = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        env={**_plain_env(), "FORCE_COLOR": "1"},
        timeout=60,
    )
    assert b"\033[1m== T" in forced.stdout
    both = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        env={**_plain_env(), "FORCE_COLOR": "1", "NO_COLOR": "1"},
        timeout=60,
    )
    assert b"\033[" not in both.stdout and b"== T" in both.stdout


def _wire_model(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return {
            "content": "Forecast: "
            + "; ".join(m["content"] for m in messages if m["role"] == "tool")
        }
    text = str(messages[-1].get("content", "")).lower()
    names = {t["function"]["name"] for t in body.get("tools") or ()}
    if "get_weather" in names and "paris" in text:
        return {"tool_calls": [{"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}]}
    return {"content": f"answer to: {text[:40]}"}


def test_demo_live_against_an_openai_compatible_endpoint() -> None:
    with LoopbackServer(default=_wire_model) as server:
        proc = _run({"LIGHTAGENT_BASE_URL": server.base_url, "LIGHTAGENT_MODEL": "tour-model"})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "live model tour-model" in proc.stdout
        assert "Forecast: light rain, 14°C" in proc.stdout
        assert "after resume: success" in proc.stdout or "first run: success" in proc.stdout
        assert server.requests and all(r["model"] == "tour-model" for r in server.requests)
        assert any(r.get("tools") for r in server.requests)


def test_make_help_writes_no_colour_codes_into_a_pipe() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(
        [make, "-s", "help"], cwd=DEMO.parents[1], capture_output=True, timeout=60, env=_plain_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert b"demo " in proc.stdout and b"\033[" not in proc.stdout
