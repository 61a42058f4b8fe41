"""The examples as real wheels in a fresh virtual environment: discovered through their
entry points and used by an agent against the loopback OpenAI-wire server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .test_seams_examples import AGENT, EXAMPLES, ROOT

pytestmark = [pytest.mark.venv, pytest.mark.slow]

#: The distributions ``memory=`` and ``retrieval=`` need beside the core.
MEMORY = ("lightagent-control", "lightagent-memory", "lightagent-rag-fts")


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LIGHTAGENT_", "PYTHON", "VIRTUAL_ENV"))
    }
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    house = tmp_path_factory.mktemp("wheels")
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "-w", str(house)]
    _run([*pip, str(ROOT / "lightagent-core")])
    # memory= is lightagent-memory's (which builds on lightagent-control), retrieval=
    # lightagent-rag-fts's
    _run([*pip, "--no-deps", *(str(ROOT / d) for d in MEMORY)])
    _run([*pip, "--no-deps", *(str(ROOT / "examples" / e) for e in EXAMPLES)])
    venv = tmp_path_factory.mktemp("venv") / "env"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    install = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
    _run(
        [
            *install,
            "-q",
            "--no-index",
            "--find-links",
            str(house),
            "lightagent-core",
            *MEMORY,
            *(d for d, _, _ in EXAMPLES.values()),
        ]
    )
    return venv


def test_wheels_are_discovered_and_register_by_kind(venv):
    proc = _run([str(venv / "bin" / "lightagent"), "plugins", "--json"])
    plugins = {p["name"]: p for p in json.loads(proc.stdout)}
    for dist, _, registered in EXAMPLES.values():
        assert plugins[dist]["status"] == "loaded", plugins[dist]
        assert plugins[dist]["registered"] == registered


def test_an_agent_in_the_venv_uses_all_three(venv, tmp_path, loopback_server):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "trip.md").write_text("The trip to the lake is 3 km long.")
    memory_path = tmp_path / "memories.jsonl"
    loopback_server.reply(
        {
            "tool_calls": [
                {
                    "name": "convert_length",
                    "arguments": {"value": 3, "from_unit": "km", "to_unit": "mi"},
                }
            ]
        },
        "About 1.9 miles.",
    )
    proc = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            textwrap.dedent(AGENT),
            loopback_server.base_url,
            str(memory_path),
            str(notes),
        ]
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["error"] is None and out["outputs"] == ["1.9 mi"]
    assert "[notes:trip.md#0]" in loopback_server.requests[0]["messages"][0]["content"]
    assert memory_path.read_text().count("\n") == 1
