"""validate_connector / `lightagent validate-connector`: every malicious fixture is rejected
with its own code, and the validator itself makes no network connection."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
from lightagent.errors import ValidationError
from lightagent_contracts.connectors import ConnectorManifest, validate_connector
from lightagent_contracts.connectors.credentials import is_placeholder
from lightagent_contracts.connectors.findings import FINDING_CODES
from lightagent_contracts.connectors.mcp_settings import check_mcp_servers
from lightagent_contracts.connectors.static import scan_sources
from pydantic import BaseModel

FIXTURES = Path(__file__).parent / "fixtures"


def _codes(report, level: str = "error") -> set[str]:
    return {f.code for f in report.findings if f.level == level}


def test_import_time_network_call_is_refused_and_no_connection_is_made(listener, monkeypatch):
    monkeypatch.setenv("LAV_FIXTURE_PORT", str(listener.port))
    # Sanity: the listener really counts connections (so 0 below means something).
    socket.create_connection(("127.0.0.1", listener.port)).close()
    deadline = __import__("time").monotonic() + 2
    while listener.accepted < 1 and __import__("time").monotonic() < deadline:
        __import__("time").sleep(0.01)
    assert listener.accepted == 1

    from lightagent_contracts.network import block_network

    with block_network() as guard:  # the validating process itself stays off the network
        report = validate_connector(FIXTURES / "lav-fixture-network")
    assert guard.attempts == []

    assert not report.passed
    assert "LAV021" in _codes(report)
    finding = next(f for f in report.findings if f.code == "LAV021")
    assert finding.location == "src/lav_fixture_network/plugin.py:7"
    assert str(listener.port) in finding.message
    assert listener.accepted == 1, (
        "the validator (or the plugin it loaded) connected to the listener"
    )


def test_import_time_file_write_is_refused(tmp_path, monkeypatch):
    target = tmp_path / "written.txt"
    monkeypatch.setenv("LAV_FIXTURE_WRITE_PATH", str(target))
    report = validate_connector(FIXTURES / "lav-fixture-write")
    assert "LAV022" in _codes(report)
    assert not target.exists()
    assert next(f for f in report.findings if f.code == "LAV022").location.endswith("plugin.py:5")


def test_hookimpl_with_unknown_argument_is_rejected():
    report = validate_connector(FIXTURES / "lav-fixture-badarg")
    assert "LAV031" in _codes(report)
    finding = next(f for f in report.findings if f.code == "LAV031")
    assert "settings" in finding.message and finding.location.endswith("plugin.py:6")


def test_duplicate_tool_name_is_rejected():
    report = validate_connector(FIXTURES / "lav-fixture-duptool")
    assert _codes(report) == {"LAV051"}


def test_literal_api_key_is_rejected_without_running_code():
    report = validate_connector(FIXTURES / "lav-fixture-secret", sandbox=False)
    assert _codes(report) == {"LAV070"}
    assert report.import_seconds is None  # static only: the plugin was never imported


def test_slow_import_is_stopped_at_the_time_limit_with_the_time_measured(monkeypatch):
    monkeypatch.setenv("LAV_FIXTURE_SLEEP", "60")
    report = validate_connector(FIXTURES / "lav-fixture-slow", timeout=2.0)
    assert "LAV023" in _codes(report)
    assert 2.0 <= report.import_seconds < 30
    assert (
        "stopped at the 2s limit" in next(f for f in report.findings if f.code == "LAV023").message
    )


def test_import_slower_than_the_budget_fails(monkeypatch):
    monkeypatch.setenv("LAV_FIXTURE_SLEEP", "0.6")
    report = validate_connector(FIXTURES / "lav-fixture-slow", import_budget=0.3, timeout=20)
    assert "LAV024" in _codes(report)
    assert report.import_seconds >= 0.6


def test_oversized_import_fails_the_memory_budget(monkeypatch):
    monkeypatch.setenv("LAV_FIXTURE_MB", "96")
    report = validate_connector(FIXTURES / "lav-fixture-heavy", memory_budget_mb=48)
    assert "LAV025" in _codes(report)


def test_static_scan_flags_risky_code_unknown_hooks_and_bad_manifest():
    report = validate_connector(FIXTURES / "lav-fixture-unsafe")
    errors, warnings = _codes(report), _codes(report, "warning")
    assert {"LAV030", "LAV060", "LAV070", "LAV080", "LAV092", "LAV096"} <= errors
    assert {"LAV081", "LAV082", "LAV083", "LAV084", "LAV085"} <= warnings
    lines = {f.location for f in report.findings if f.code == "LAV081"}
    # `# lightagent: allow LAV081` silences line 26 only.
    assert "src/lav_fixture_unsafe/plugin.py:26" not in lines
    assert "src/lav_fixture_unsafe/plugin.py:18" in lines


def test_every_fixture_fails_with_its_own_code(monkeypatch, tmp_path, listener):
    monkeypatch.setenv("LAV_FIXTURE_SLEEP", "60")
    monkeypatch.setenv("LAV_FIXTURE_PORT", str(listener.port))
    monkeypatch.setenv("LAV_FIXTURE_WRITE_PATH", str(tmp_path / "out.txt"))
    expected = {
        "lav-fixture-network": "LAV021",
        "lav-fixture-write": "LAV022",
        "lav-fixture-badarg": "LAV031",
        "lav-fixture-duptool": "LAV051",
        "lav-fixture-secret": "LAV070",
        "lav-fixture-slow": "LAV023",
    }
    seen = {}
    for name, code in expected.items():
        # Only the sleeper needs a short limit; on a loaded machine a sandbox start alone
        # can take two seconds, which would turn the others into LAV023 as well.
        report = validate_connector(FIXTURES / name, timeout=2.0 if code == "LAV023" else 30.0)
        assert code in _codes(report), (name, report.format_text())
        seen[name] = code
    assert len(set(seen.values())) == len(expected)
    assert listener.accepted == 0, "a validation made a network connection"
    assert not (tmp_path / "out.txt").exists()


def test_unknown_target_is_a_finding_not_a_traceback(tmp_path):
    report = validate_connector(tmp_path / "nowhere")
    assert _codes(report) == {"LAV001"}
    report = validate_connector("no-such-distribution-anywhere")
    assert _codes(report) == {"LAV001"}


def test_installed_first_party_distribution_validates_by_name():
    report = validate_connector("lightagent-flow")
    assert report.distribution == "lightagent-flow"
    assert report.registered.get("workflow") == ["lightflow"]  # it really ran, sandboxed
    assert report.import_seconds is not None


def test_core_requirement_excluding_running_core_is_rejected(tmp_path):
    project = tmp_path / "old"
    (project / "src" / "old_plugin").mkdir(parents=True)
    (project / "src" / "old_plugin" / "__init__.py").write_text("")
    (project / "src" / "old_plugin" / "plugin.py").write_text("")
    (project / "README.md").write_text("# old\n")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "old-plugin"\nversion = "1.0"\nreadme = "README.md"\n'
        'dependencies = ["lightagent-core<0.0.1"]\n'
        '[project.entry-points.lightagent]\nold-plugin = "old_plugin.plugin"\n'
    )
    report = validate_connector(project, sandbox=False)
    assert "LAV005" in _codes(report)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "old-plugin"\nversion = "1.0"\n'
        '[project.entry-points.lightagent]\nsomething-else = "old_plugin.plugin"\n'
    )
    report = validate_connector(project, sandbox=False)
    assert {"LAV003", "LAV004", "LAV095"} <= _codes(report)


def test_cli_json_and_exit_status():
    cmd = [sys.executable, "-m", "lightagent.cli", "validate-connector"]
    bad = subprocess.run(
        [*cmd, str(FIXTURES / "lav-fixture-badarg"), "--json"], capture_output=True, text=True
    )
    assert bad.returncode == 1, bad.stderr
    data = json.loads(bad.stdout)
    assert data["passed"] is False
    assert {f["code"] for f in data["findings"]} >= {"LAV031"}
    assert all({"code", "level", "message", "location"} <= set(f) for f in data["findings"])
    good = subprocess.run(
        [*cmd, str(FIXTURES / "lav-fixture-secret"), "--static-only"],
        capture_output=True,
        text=True,
    )
    assert good.returncode == 1 and "LAV070" in good.stdout


@pytest.mark.parametrize(
    "kwargs",
    [{"timeout": 0}, {"import_budget": -1}, {"memory_budget_mb": "big"}, {"timeout": True}],
)
def test_bad_options_are_typed_errors(kwargs):
    from lightagent.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as info:
        validate_connector(FIXTURES / "lav-fixture-secret", **kwargs)
    assert info.value.code == "LA-CONFIG"


def test_bad_target_type_is_a_typed_error():
    from lightagent.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        validate_connector(42)  # type: ignore[arg-type]


def test_finding_codes_are_unique_and_leveled():
    assert all(code.startswith("LAV") and len(code) == 6 for code in FINDING_CODES)
    assert {level for level, _ in FINDING_CODES.values()} <= {"error", "warning", "info"}


def test_manifest_bad_input_is_a_typed_error():
    with pytest.raises(ValidationError) as info:
        ConnectorManifest.from_any({"name": "1bad", "version": "x.y"})
    assert info.value.code == "LA-VALIDATION"
    fields = {p["field"] for p in info.value.details["problems"]}
    assert fields == {"name", "version"}
    with pytest.raises(ValidationError):
        ConnectorManifest.from_any(["not", "a", "dict"])
    with pytest.raises(ValidationError):
        ConnectorManifest.from_any({"name": "ok", "version": "1.0", "core_requires": "??"})


def test_manifest_alone_can_be_validated():
    manifest = ConnectorManifest(
        name="demo",
        version="1.0.0",
        mcp_servers={
            "fs": {"command": "npx", "args": ["-y", "server"], "env": {"TOKEN": "${FS_TOKEN}"}}
        },
    )
    report = validate_connector(manifest)
    assert report.passed
    assert "LAV013" in _codes(report, "warning")  # no description


def test_mcp_shapes():
    ok = {
        "stdio": {"command": "python", "args": ["-m", "srv"]},
        "sse": {"url": "https://x.example/sse", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "http": {
            "url": "http://127.0.0.1:9/mcp",
            "transport": "streamable-http",
            "namespace_tools": True,
        },
    }
    assert check_mcp_servers({"mcpServers": ok}, "x") == []
    bad = check_mcp_servers(
        {"s": {"command": "", "transport": "pigeon", "reconnect_attempts": -1}}, "x"
    )
    assert {f.code for f in bad} == {"LAV060"} and len(bad) == 3


def test_placeholders_are_not_credentials(tmp_path):
    assert is_placeholder("${OPENAI_API_KEY}") and is_placeholder("<your key>")
    assert is_placeholder("OPENAI_API_KEY") and is_placeholder("your_api_key_here")
    assert not is_placeholder("9f8e7d6c5b4a3928")
    src = tmp_path / "pkg"
    src.mkdir()
    (src / "m.py").write_text(
        'api_key = "${OPENAI_API_KEY}"\nheaders = {"Authorization": "Bearer {{token}}"}\n'
        'token_env = "MY_TOKEN"\nkey = os.environ["API_KEY"]\n'
    )
    (src / "settings.json").write_text('{"password": "hunter2hunter2"}')
    findings = scan_sources([src], tmp_path)
    assert [(f.code, f.location) for f in findings] == [("LAV070", "pkg/settings.json:1")]


def test_core_builtin_plugin_passes_the_same_object_checks():
    # In a subprocess: resolving every built-in provider imports openai, sqlalchemy...
    code = (
        "import json, lightagent._builtins as b;"
        "from lightagent_contracts.connectors.objects import inspect_plugin;"
        "r = inspect_plugin(b, plugin_name='lightagent-core');"
        "print(json.dumps({'findings': r['findings'], 'registered': r['registered']}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["findings"] == []
    assert {"model", "session_store", "exporter"} <= set(result["registered"])


def test_protocol_mismatch_is_reported_for_instances_and_classes():
    from lightagent.models.scripted import ScriptedModel
    from lightagent_contracts.connectors.objects import _protocol_problem

    class HalfModel:
        name = "half"

        def complete(self, request): ...

    assert _protocol_problem("model", ScriptedModel) is None
    assert _protocol_problem("model", ScriptedModel()) is None
    assert "missing acomplete, astream, stream" in _protocol_problem("model", HalfModel)
    assert "missing" in _protocol_problem("memory", object())


def test_manifest_skills_and_docs_must_exist(tmp_path):
    from lightagent_contracts.connectors.scaffold import new_plugin

    project = new_plugin("skilled", directory=tmp_path)
    plugin = project / "src" / "lightagent_skilled" / "plugin.py"
    plugin.write_text(
        plugin.read_text().replace(
            'core_requires="',
            'skills=("skills/summarise", "skills/missing"), docs=("README.md", "https://example.org/docs"), core_requires="',
        )
    )
    (project / "src" / "lightagent_skilled" / "skills" / "summarise").mkdir(parents=True)
    (project / "src" / "lightagent_skilled" / "skills" / "summarise" / "SKILL.md").write_text(
        "# Summarise\n"
    )
    report = validate_connector(project)
    skills = [f for f in report.findings if f.code == "LAV094"]
    assert [f.message for f in skills] == [
        "skill 'skills/missing': no skills/missing/SKILL.md in the project or package"
    ]
    assert _codes(report, "info") >= {"LAV097"}
    assert "LAV096" not in report.codes()


def test_cli_budgets_reach_the_validator():
    env = {**os.environ, "LAV_FIXTURE_MB": "96", "LAV_FIXTURE_SLEEP": "0.5"}
    cmd = [sys.executable, "-m", "lightagent.cli", "validate-connector", "--json"]
    heavy = subprocess.run(
        [*cmd, "--memory-budget", "48", str(FIXTURES / "lav-fixture-heavy")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert "LAV025" in {f["code"] for f in json.loads(heavy.stdout)["findings"]}
    slow = subprocess.run(
        [*cmd, "--import-budget", "0.2", str(FIXTURES / "lav-fixture-slow")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert "LAV024" in {f["code"] for f in json.loads(slow.stdout)["findings"]}


def test_hookimpls_are_checked_from_source_when_the_plugin_is_not_loaded():
    report = validate_connector(FIXTURES / "lav-fixture-badarg", sandbox=False)
    (finding,) = [f for f in report.findings if f.code == "LAV031"]
    assert (
        finding.location == "src/lav_fixture_badarg/plugin.py:6" and "settings" in finding.message
    )
    report = validate_connector(FIXTURES / "lav-fixture-unsafe", sandbox=False)
    assert [f.location for f in report.findings if f.code == "LAV030"] == [
        "src/lav_fixture_unsafe/plugin.py:29"
    ]
    # Loaded in the sandbox, the same finding is reported once, from the live check.
    report = validate_connector(FIXTURES / "lav-fixture-badarg")
    assert [f.code for f in report.findings].count("LAV031") == 1


def _mini_project(base: Path, name: str, source: str) -> Path:
    pkg = name.replace("-", "_")
    project = base / name
    (project / "src" / pkg).mkdir(parents=True)
    (project / "src" / pkg / "__init__.py").write_text("")
    (project / "src" / pkg / "plugin.py").write_text(source)
    (project / "README.md").write_text(f"# {name}\n")
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\nversion = "0.1.0"\nreadme = "README.md"\n'
        'dependencies = ["lightagent-core>=0.1.0,<0.2"]\n'
        f'[project.entry-points.lightagent]\n{name} = "{pkg}.plugin"\n'
    )
    return project


def test_process_starts_and_database_files_are_refused_at_import(tmp_path):
    marker = tmp_path / "ran.txt"
    proc_plugin = _mini_project(
        tmp_path, "spawny", f"import subprocess\nsubprocess.run(['touch', {str(marker)!r}])\n"
    )
    report = validate_connector(proc_plugin)
    assert "LAV026" in _codes(report)
    assert not marker.exists()
    db = tmp_path / "plugin.db"
    db_plugin = _mini_project(tmp_path, "dbby", f"import sqlite3\nsqlite3.connect({str(db)!r})\n")
    report = validate_connector(db_plugin)
    assert "LAV022" in _codes(report)
    assert not db.exists()


def test_writes_inside_the_sandbox_temp_dir_are_allowed(tmp_path):
    project = _mini_project(
        tmp_path,
        "tempy",
        "import tempfile\nfrom lightagent import hookimpl\n"
        "with tempfile.NamedTemporaryFile('w') as fh:\n    fh.write('scratch')\n\n\n"
        "@hookimpl\ndef lightagent_manifest():\n"
        "    return {'name': 'tempy', 'version': '0.1.0', 'description': 'scratch files only'}\n",
    )
    report = validate_connector(project)
    assert report.passed, report.format_text()
    assert not report.warnings


class Address(BaseModel):
    street: str


def test_tool_schema_check_accepts_what_at_tool_generates_and_rejects_bad_shapes():
    from lightagent import tool
    from lightagent_contracts.connectors.objects import check_tool_schema

    @tool
    def rich(
        a: Literal["x", "y"],
        b: int | None = None,
        c: list[str] | None = None,
        d: Address | None = None,
        e: dict[str, float] | None = None,
        g: tuple[int, int] = (1, 2),
    ) -> str:
        """Exercise the schema generator."""
        return ""

    schema = {"name": rich.name, "description": rich.description, "parameters": rich.parameters}
    assert check_tool_schema(schema) == []
    bad = {
        "name": "has space",
        "parameters": {
            "type": "object",
            "properties": {"x": {"type": "strin"}, "y": {}, "z": {"type": "array"}},
            "required": ["w"],
        },
    }
    problems = check_tool_schema(bad)
    assert len(problems) == 5, problems
    assert check_tool_schema({"name": "ok", "parameters": {"type": "array"}})


def test_poetry_projects_and_nameless_projects(tmp_path):
    project = tmp_path / "poetic"
    (project / "poetic_plugin").mkdir(parents=True)
    (project / "poetic_plugin" / "__init__.py").write_text("")
    (project / "poetic_plugin" / "plugin.py").write_text("")
    (project / "README.md").write_text("# poetic\n")
    (project / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "poetic"\nversion = "0.2.0"\nreadme = "README.md"\n'
        '[tool.poetry.dependencies]\npython = "^3.10"\nlightagent-core = "^0.1.0"\n'
        '[tool.poetry.plugins."lightagent"]\npoetic = "poetic_plugin.plugin"\n'
    )
    report = validate_connector(project, sandbox=False)
    assert report.distribution == "poetic" and report.version == "0.2.0"
    assert not report.errors, report.format_text()
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text().replace('"^0.1.0"', '"^0.0.1"')
    )
    assert "LAV005" in _codes(validate_connector(project, sandbox=False))  # ^0.0.1 means <0.0.2
    (project / "pyproject.toml").write_text("[build-system]\nrequires = []\n")
    assert _codes(validate_connector(project)) == {"LAV006"}


def test_a_name_conflict_with_the_core_is_caught_by_the_real_host(tmp_path):
    project = _mini_project(
        tmp_path,
        "clashy",
        "from lightagent import hookimpl\n\n\n@hookimpl\ndef register_models(register):\n"
        "    register('scripted', 'lightagent.models.scripted:ScriptedModel')\n",
    )
    report = validate_connector(project)
    (finding,) = [f for f in report.findings if f.code == "LAV035"]
    assert "scripted" in finding.message and "lightagent-core" in finding.message
