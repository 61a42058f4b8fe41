"""`lightagent new-plugin` output, examples/plugin-hello and every first-party distribution
pass `validate-connector`; the generated skeleton's own contract test passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lightagent.errors import ConfigurationError
from lightagent_contracts.connectors import validate_connector
from lightagent_contracts.connectors.cli import configure_new_plugin, run_new_plugin
from lightagent_contracts.connectors.scaffold import new_plugin, plugin_names

ROOT = Path(__file__).resolve().parents[3]
FIRST_PARTY = [
    "lightagent-flow",
    "lightagent-dag",
    "lightagent-mcp",
    "lightagent-rag-fts",
    "lightagent-memory-mem0",
    "lightagent-guardrails",
    "lightagent-dbos",
    "lightagent-selection",
    "lightagent-postgres",
    "contracts",
]


def test_skeleton_passes_validation_as_generated_with_no_warnings(tmp_path):
    project = new_plugin("acme-search", directory=tmp_path)
    assert project == tmp_path / "lightagent-acme-search"
    assert {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()} == {
        "pyproject.toml",
        "README.md",
        "src/lightagent_acme_search/__init__.py",
        "src/lightagent_acme_search/plugin.py",
        "tests/test_lightagent_acme_search_contract.py",
    }
    report = validate_connector(project)
    assert report.passed, report.format_text()
    assert not report.warnings, report.format_text()
    assert report.registered == {"tool": ["acme_search_echo"]}
    assert report.manifest["name"] == "lightagent-acme-search"


def test_skeleton_contract_test_passes(tmp_path):
    project = new_plugin("weather", directory=tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout


def test_new_plugin_bad_input_is_typed(tmp_path):
    for bad in ("", "9lives", "has space", "UPPER_ok?", "-dash"):
        with pytest.raises(ConfigurationError) as info:
            plugin_names(bad)
        assert info.value.code == "LA-CONFIG"
    new_plugin("twice", directory=tmp_path)
    with pytest.raises(ConfigurationError, match="not empty"):
        new_plugin("twice", directory=tmp_path)
    assert new_plugin("twice", directory=tmp_path, force=True).is_dir()
    assert plugin_names("lightagent-x1") == ("lightagent-x1", "lightagent_x1")


def test_cli_functions(tmp_path, capsys):
    import argparse

    parser = argparse.ArgumentParser()
    configure_new_plugin(parser)
    assert run_new_plugin(parser.parse_args(["demo", "--dir", str(tmp_path)])) == 0
    assert "lightagent-demo" in capsys.readouterr().out
    assert run_new_plugin(parser.parse_args(["demo", "--dir", str(tmp_path)])) == 2
    assert "LA-CONFIG" in capsys.readouterr().err


def test_plugin_hello_example_passes_validation_with_no_warnings():
    report = validate_connector(ROOT / "examples" / "plugin-hello")
    assert report.passed, report.format_text()
    assert not report.warnings, report.format_text()
    assert report.registered == {"tool": ["hello"], "command": ["hello"]}


def test_plugin_hello_contract_test_passes():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=ROOT / "examples" / "plugin-hello",
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("dist", FIRST_PARTY)
def test_first_party_distribution_passes_validation(dist):
    report = validate_connector(ROOT / dist)
    assert report.passed, report.format_text()
