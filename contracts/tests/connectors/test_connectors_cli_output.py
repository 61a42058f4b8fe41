"""What `lightagent validate-connector` tells an outside author: one finding per cause,
hints that name things they have, and quiet output into a pipe that closes early."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from lightagent.manifest import ConnectorManifest
from lightagent_contracts.connectors import validate_connector
from lightagent_contracts.connectors.scaffold import new_plugin

FIXTURES = Path(__file__).parent / "fixtures"
CLI = [sys.executable, "-c", "import sys; from lightagent.cli import main; sys.exit(main())"]
# Paths inside this repository (docs/x.md, contracts/…, lightagent-core/…), which a plugin
# author who installed the packages from an index does not have.
REPO_PATH = re.compile(r"(^|[\s(`'\"])(docs|contracts|examples|lightagent-[a-z0-9-]+)/")


def _plugin(tmp_path: Path, name: str, line: str, after: str) -> Path:
    project = new_plugin(name, directory=tmp_path)
    plugin = project / "src" / f"lightagent_{name}" / "plugin.py"
    text = plugin.read_text()
    assert after in text
    plugin.write_text(text.replace(after, f"{after}\n{line}", 1))
    return project


def test_an_import_failure_is_reported_alone(tmp_path: Path) -> None:
    project = _plugin(
        tmp_path, "badimp", "import no_such_dependency_xyz  # noqa", "from typing import Any"
    )
    report = validate_connector(project)
    assert [f.code for f in report.findings] == ["LAV020"], report.format_text()
    assert "no_such_dependency_xyz" in report.findings[0].message
    assert "returns no manifest" not in report.format_text()


def test_a_plugin_that_loads_without_a_manifest_still_gets_lav010(tmp_path: Path) -> None:
    project = new_plugin("nomanifest", directory=tmp_path)
    plugin = project / "src" / "lightagent_nomanifest" / "plugin.py"
    text = plugin.read_text()
    plugin.write_text(text[: text.index("@hookimpl\ndef lightagent_manifest")])
    report = validate_connector(project)
    assert "LAV010" in report.codes() and "LAV020" not in report.codes(), report.format_text()


def test_hints_name_what_an_outside_author_has(tmp_path: Path) -> None:
    invalid = _plugin(
        tmp_path,
        "badmanifest",
        "",
        '        name="lightagent-badmanifest",\n        version=__version__,',
    )
    plugin = invalid / "src" / "lightagent_badmanifest" / "plugin.py"
    plugin.write_text(plugin.read_text().replace("version=__version__", 'version="one"'))
    reports = [
        validate_connector(invalid),
        validate_connector(tmp_path / "nowhere"),
        *(validate_connector(FIXTURES / name, sandbox=False) for name in os.listdir(FIXTURES)),
        validate_connector(ConnectorManifest("x", "0.1.0", tools=[print])),
    ]
    lav011 = [f for f in reports[0].findings if f.code == "LAV011"]
    assert lav011 and lav011[0].hint, reports[0].format_text()
    assert "Hint:" not in lav011[0].message  # the hint is its own field, not pasted in
    assert "lightagent new-plugin" in lav011[0].hint or "ConnectorManifest" in lav011[0].hint
    for report in reports:
        for finding in report.findings:
            for text in (finding.message, finding.hint):
                assert not REPO_PATH.search(text), (finding.code, text)
    try:
        ConnectorManifest.from_any({"name": "x", "version": "one"})
    except Exception as exc:
        assert not REPO_PATH.search(getattr(exc, "hint", "")), exc


def test_the_text_report_shows_each_hint(tmp_path: Path) -> None:
    report = validate_connector(FIXTURES / "lav-fixture-secret", sandbox=False)
    finding = next(f for f in report.findings if f.code == "LAV070")
    assert finding.hint and f"hint: {finding.hint}" in report.format_text()


def test_json_into_a_pipe_closed_before_any_output_exits_quietly() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write is EPIPE
    try:
        proc = subprocess.run(
            [
                *CLI,
                "validate-connector",
                "--json",
                "--static-only",
                str(FIXTURES / "lav-fixture-secret"),
            ],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert proc.stderr == "", proc.stderr
    assert proc.returncode == 141  # 128 + SIGPIPE, what a shell reports for `yes | head`


def test_json_piped_into_head_prints_no_traceback() -> None:
    fixture = str(FIXTURES / "lav-fixture-secret")
    command = shlex.join([*CLI, "validate-connector", "--json", "--static-only", fixture])
    proc = subprocess.run(
        ["/bin/sh", "-c", f"{command} | head -c 1"], capture_output=True, text=True, timeout=120
    )
    # Whether head closes before or after the last write is up to the scheduler; either
    # way the command says nothing on stderr.
    assert proc.stdout == "{" and proc.stderr == "", proc.stderr


def test_every_finding_code_has_a_hint() -> None:
    from lightagent_contracts.connectors.findings import FINDING_CODES, Finding

    for code in FINDING_CODES:
        hint = Finding.make(code, "x").hint
        assert hint and not REPO_PATH.search(hint), code
