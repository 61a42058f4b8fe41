"""discover_project_instructions: nested AGENTS.md from the project root down, nearest last, capped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lightagent import LightAgent, ScriptedModel, discover_project_instructions
from lightagent_skills import find_project_instructions


def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Use tabs.", encoding="utf-8")
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "AGENTS.md").write_text("Package rules.", encoding="utf-8")
    (root / "pkg" / "sub" / "AGENTS.md").write_text("Nearest rules win.", encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("OUTSIDE THE PROJECT", encoding="utf-8")
    return root


def test_root_first_nearest_last_and_nothing_above_the_root(tmp_path) -> None:
    root = project(tmp_path)
    text = discover_project_instructions(root / "pkg" / "sub")
    assert text.index("Use tabs.") < text.index("Package rules.") < text.index("Nearest rules win.")
    assert "OUTSIDE THE PROJECT" not in text
    assert "<!-- pkg/sub/AGENTS.md -->" in text


def test_without_a_project_root_only_the_start_directory_is_read(tmp_path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "AGENTS.md").write_text("parent", encoding="utf-8")
    (tmp_path / "a" / "b" / "AGENTS.md").write_text("here", encoding="utf-8")
    assert [f.text for f in find_project_instructions(tmp_path / "a" / "b")] == ["here"]


def test_the_cap_keeps_the_nearest_files_whole(tmp_path) -> None:
    root = project(tmp_path)
    (root / "AGENTS.md").write_text("R" * 500, encoding="utf-8")
    files = find_project_instructions(root / "pkg" / "sub", max_chars=40)
    by_path = {f.path: f for f in files}
    assert (
        by_path["pkg/sub/AGENTS.md"].text == "Nearest rules win."
        and not by_path["pkg/sub/AGENTS.md"].truncated
    )
    assert by_path["pkg/AGENTS.md"].text == "Package rules."
    assert by_path["AGENTS.md"].truncated and len(by_path["AGENTS.md"].text) == 40 - 18 - 14
    text = discover_project_instructions(root / "pkg" / "sub", max_chars=32)
    assert "AGENTS.md: left out, over the 32-character limit" in text


def test_a_symlink_out_of_the_project_is_not_read(tmp_path) -> None:
    root = project(tmp_path)
    (root / "pkg" / "sub" / "AGENTS.md").unlink()
    (root / "pkg" / "sub" / "AGENTS.md").symlink_to(tmp_path / "AGENTS.md")
    assert "OUTSIDE" not in discover_project_instructions(root / "pkg" / "sub")


def test_opt_in_on_the_agent_over_the_wire(tmp_path, monkeypatch, loopback_server) -> None:
    root = project(tmp_path)
    monkeypatch.chdir(root / "pkg")
    loopback_server.reply("plain", "with instructions")

    def agent(**kw: Any) -> LightAgent:
        return LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, **kw)

    assert agent().run("q") == "plain"  # off by default
    assert "Package rules." not in loopback_server.requests[0]["messages"][0]["content"]
    assert agent(project_instructions=True).run("q") == "with instructions"
    system = loopback_server.requests[1]["messages"][0]["content"]
    assert system.startswith("You are a helpful agent.\n\n# Project instructions (AGENTS.md)")
    assert system.index("Use tabs.") < system.index("Package rules.")
    nearest = LightAgent(model=ScriptedModel(), project_instructions=root / "pkg" / "sub")
    assert nearest.project_instructions.endswith("Nearest rules win.")
