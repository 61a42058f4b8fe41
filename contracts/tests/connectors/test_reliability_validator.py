"""Reliability: `validate-connector` on a plugin project whose symlinks lead outside it.

A project (an sdist, a cloned repository) can carry symlinks. The static scan must not
read what they point to outside the project (a credentials file, a huge file, another
user's folder) as if it were the plugin, and must reject the project with its own code.
Symlinks that stay inside the project are ordinary files.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from lightagent_contracts.connectors import validate_connector

HELLO = Path(__file__).resolve().parents[3] / "examples" / "plugin-hello"
CANARY = "sk-live-0123456789abcdefghijklmnop"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "proj"
    shutil.copytree(HELLO, project, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    return project, project / "src" / "lightagent_plugin_hello"


def test_the_copied_example_passes(tmp_path):
    project, package = _project(tmp_path)
    os.symlink("plugin.py", package / "alias.py")  # a symlink that stays inside
    report = validate_connector(project, sandbox=False)
    assert report.passed, [f.format() for f in report.findings]


def test_symlinks_out_of_the_project_are_rejected_and_never_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "creds.json").write_text(f'{{"api_key": "{CANARY}"}}\n')
    (outside / "more").mkdir()
    (outside / "more" / "evil.py").write_text(f'TOKEN = "{CANARY}"\nexec(input())\n')
    project, package = _project(tmp_path)
    os.symlink(outside / "creds.json", package / "settings.json")
    os.symlink(outside / "more", package / "vendored")
    os.symlink("../../../outside/more/evil.py", package / "helper.py")  # relative, escaping
    report = validate_connector(project, sandbox=False)
    assert not report.passed
    escaping = {f.location: f for f in report.findings if f.code == "LAV089"}
    assert set(escaping) == {
        "src/lightagent_plugin_hello/settings.json",
        "src/lightagent_plugin_hello/vendored",
        "src/lightagent_plugin_hello/helper.py",
    }
    assert all(f.level == "error" for f in escaping.values())
    # What lies outside was not scanned as the plugin's own code or data.
    assert not [f for f in report.findings if f.code in ("LAV070", "LAV080")], [
        f.format() for f in report.findings
    ]
    assert CANARY not in report.to_json()


def test_a_tool_name_with_a_trailing_line_break_is_a_finding():
    """The validator must not pass a tool the runtime then refuses (re.match with $ let
    "lookup\\n" through)."""
    from lightagent_contracts.connectors.objects import check_tool_schema

    params = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert check_tool_schema({"name": "lookup", "description": "d", "parameters": params}) == []
    problems = check_tool_schema({"name": "lookup\n", "description": "d", "parameters": params})
    assert problems and "name" in problems[0]
