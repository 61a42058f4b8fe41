"""Regenerate docs/images/trace-page.png: a LightFlow run with agent steps, tools, a tool
failure, a retried step and memory, recorded in SQLite, drawn by `lightagent trace view`
and photographed by headless Chromium.

    .venv/bin/python scripts/trace_page_screenshot.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lightagent import LightAgent, ScriptedModel, SqliteSessionStore, tool
from lightagent.cli import main
from lightagent_flow import LightFlow

ROOT = Path(__file__).resolve().parents[1]


@tool
def lookup(company: str) -> str:
    """Look a company up."""
    if company == "ACME Ltd":
        raise ValueError("no such company")
    return f"{company} makes anvils"


def record(db: Path) -> None:
    store = SqliteSessionStore(db)
    usage = {"prompt_tokens": 420, "completion_tokens": 60, "total_tokens": 480}
    research = LightAgent(
        name="research",
        model=ScriptedModel(
            [
                {
                    "tool_calls": [
                        {"name": "lookup", "arguments": {"company": "ACME Ltd"}},
                        {"name": "lookup", "arguments": {"company": "ACME"}},
                    ],
                    "usage": usage,
                },
                {"content": "ACME makes anvils.", "usage": usage},
                {"content": "ACME, mostly.", "usage": usage},
            ]
        ),
        tools=[lookup],
        session_store=store,
    )
    research.run("Who makes anvils?", session_id="demo")
    failures = {"n": 1}

    def writer(query: str) -> str:
        if failures["n"]:
            failures["n"] -= 1
            raise RuntimeError("writer timed out")
        return "A short report on anvils."

    flow = (
        LightFlow(session_store=store, retry_backoff=0.05)
        .step("research", agent=research, tools=[lookup])
        .step("write", agent=writer, depends_on=["research"], max_retry=2)
    )
    flow.run("Analyze ACME", run_id="report-001", session_id="demo")
    store.close()


def run() -> int:
    chromium = shutil.which("chromium")
    if chromium is None:
        print("needs chromium (apt-get install -y chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "sessions.db"
        record(db)
        page = Path(tmp) / "trace.html"
        main(["trace", "view", "demo", "--store", f"sqlite:///{db}", "--output", str(page)])
        shot = ROOT / "docs" / "images" / "trace-page.png"
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={tmp}/profile", "--window-size=1280,560",
             f"--screenshot={shot}", page.as_uri()],
            check=True, capture_output=True,
        )  # fmt: skip
        print(f"wrote {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(run())
