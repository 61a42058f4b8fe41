"""The third-party-style examples (a toolset, a memory backend, a retrieval provider) pass
their contract suites, validate cleanly, and plug in through entry points alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from lightagent_contracts.connectors.validate import validate_connector

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = {
    "plugin-toolset-units": (
        "lightagent-plugin-units",
        "lightagent_plugin_units",
        {"toolset": ["units"]},
    ),
    "plugin-memory-jsonl": (
        "lightagent-plugin-memory-jsonl",
        "lightagent_plugin_memory_jsonl",
        {"memory": ["jsonl-memory"]},
    ),
    "plugin-retrieval-notes": (
        "lightagent-plugin-notes",
        "lightagent_plugin_notes",
        {"retrieval": ["notes"]},
    ),
}


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_passes_its_own_tests(example):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", "tests"],
        cwd=ROOT / "examples" / example,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_validates_with_no_warnings(example):
    report = validate_connector(ROOT / "examples" / example)
    assert report.passed, report.format_text()
    assert not report.warnings, report.format_text()
    assert report.registered == EXAMPLES[example][2]


def _fake_install(site: Path) -> None:
    """Install the examples as a pip install would look to importlib.metadata."""
    for example, (dist, package, _) in EXAMPLES.items():
        shutil.copytree(ROOT / "examples" / example / "src" / package, site / package)
        info = site / f"{package}-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n"
            "Requires-Dist: lightagent-core>=0.1.0,<0.2\n"
        )
        (info / "entry_points.txt").write_text(f"[lightagent]\n{dist} = {package}.plugin\n")


AGENT = r"""
import json, sys
from lightagent import LightAgent
base_url, memory_path, notes = sys.argv[1:4]
agent = LightAgent(
    model="loopback-model", api_key="k", base_url=base_url,
    tools=[("units", {"precision": 1})],
    memory=("jsonl-memory", {"path": memory_path}),
    retrieval=("notes", {"directory": notes}),
    retrieval_inject=1,
)
result = agent.run("How far is 3 km in miles, given the notes?", user_id="ada", result_format="object", trace=True)
print(json.dumps({"content": result.content, "error": result.error,
                  "outputs": [c["output"] for c in result.tool_calls],
                  "events": [e["type"] for e in result.trace]}))
"""


def test_installed_examples_plug_in_by_entry_point_alone(tmp_path, loopback_server):
    site = tmp_path / "site"
    site.mkdir()
    _fake_install(site)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "trip.md").write_text("The trip to the lake is 3 km long.")
    memory_path = tmp_path / "memories.jsonl"
    memory_path.write_text(
        json.dumps(
            {
                "memory": "Ada thinks in miles.",
                "user_id": "ada",
                "metadata": {"user_id": "ada", "source": "user"},
            }
        )
        + "\n"
    )
    loopback_server.reply(
        {
            "tool_calls": [
                {
                    "name": "convert_length",
                    "arguments": {"value": 3, "from_unit": "km", "to_unit": "mi"},
                },
                {"name": "search_knowledge", "arguments": {"query": "trip lake"}},
            ]
        },
        "About 1.9 miles.",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIGHTAGENT_")}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(AGENT),
            loopback_server.base_url,
            str(memory_path),
            str(notes),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["error"] is None and out["content"] == "About 1.9 miles."
    assert out["outputs"][0] == "1.9 mi"
    assert json.loads(out["outputs"][1])[0]["citation"] == "notes:trip.md#0"
    assert {"memory_read", "retrieval", "memory_write"} <= set(out["events"])
    system = loopback_server.requests[0]["messages"][0]["content"]
    assert "Ada thinks in miles." in system and "[notes:trip.md#0]" in system
    offered = {t["function"]["name"] for t in loopback_server.requests[0]["tools"]}
    assert offered == {"convert_length", "convert_temperature", "search_knowledge"}
    written = [json.loads(line) for line in memory_path.read_text().splitlines()]
    assert written[-1]["memory"] == "How far is 3 km in miles, given the notes?"
