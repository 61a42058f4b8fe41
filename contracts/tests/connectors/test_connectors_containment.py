"""The validator's sandbox contains processes, not only Python's announced calls: an
interpreter started by ``multiprocessing`` (no audit event on Python 3.11), a process
forked through libc that detaches and outlives the import, and a network call made by a
second thread while the audit hook is busy. Each is a failing finding that names it."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest
from lightagent_contracts.connectors import validate_connector
from lightagent_contracts.connectors.static import scan_sources

FIXTURES = Path(__file__).parent / "fixtures"


def _codes(report, level: str = "error") -> set[str]:
    return {f.code for f in report.findings if f.level == level}


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


@pytest.fixture
def armed(monkeypatch, tmp_path, listener):
    """Point every fixture at a real listener and a file it must not be able to write."""
    monkeypatch.setenv("LAV_FIXTURE_PORT", str(listener.port))
    target = tmp_path / "written.txt"
    monkeypatch.setenv("LAV_FIXTURE_WRITE_PATH", str(target))
    return listener, target


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 60  # a guard: a killed process goes at once
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


@pytest.mark.parametrize("method", ["spawn", pytest.param("forkserver", marks=pytest.mark.slow)])
def test_a_spawned_interpreter_is_refused_before_it_runs(armed, monkeypatch, method):
    listener, target = armed
    monkeypatch.setenv("LAV_FIXTURE_START_METHOD", method)
    report = validate_connector(FIXTURES / "lav-fixture-spawn", timeout=30)
    assert not report.passed
    finding = next(f for f in report.findings if f.code == "LAV026")
    assert "_posixsubprocess.fork_exec" in finding.message
    assert "multiprocessing" in finding.message  # names what it was starting
    assert finding.location == "src/lav_fixture_spawn/plugin.py:13"
    assert "LAV081" in _codes(report, "warning")  # the static scan saw it coming
    assert not target.exists()
    assert listener.accepted == 0


def test_a_detached_process_that_outlives_the_import_is_named_and_killed(armed):
    listener, _ = armed
    report = validate_connector(FIXTURES / "lav-fixture-orphan", timeout=30)
    assert not report.passed
    outlived = [f for f in report.findings if f.code == "LAV026" and "outlived" in f.message]
    assert outlived, report.format_text()
    assert "written by an orphan" in outlived[0].message  # its command line
    pid = int(re.search(r"pid (\d+)", outlived[0].message).group(1))
    assert _gone(pid), f"pid {pid} still runs after validation"
    if report.isolation and report.isolation.get("network_namespace"):
        assert listener.accepted == 0
    assert report.isolation is None or "subreaper" in report.isolation


def test_a_process_that_already_exited_is_reported_too(armed, monkeypatch):
    monkeypatch.setenv("LAV_FIXTURE_QUICK_EXIT", "1")
    report = validate_connector(FIXTURES / "lav-fixture-orphan", timeout=30)
    exited = [f for f in report.findings if f.code == "LAV026" and "has exited" in f.message]
    assert exited, report.format_text()
    assert not report.passed


@pytest.mark.slow
def test_processes_left_by_an_import_stopped_at_the_time_limit_are_killed(armed, monkeypatch):
    monkeypatch.setenv("LAV_FIXTURE_SLEEP_AFTER", "60")
    # The limit covers the sandbox's start-up too: 10 s lets a loaded machine reach the
    # orphan's spawn before it, and the 60 s sleep after it always reaches the limit.
    report = validate_connector(FIXTURES / "lav-fixture-orphan", timeout=10)
    assert "LAV023" in _codes(report)
    outlived = [f for f in report.findings if f.code == "LAV026" and "outlived" in f.message]
    assert outlived, report.format_text()
    pid = int(re.search(r"pid (\d+)", outlived[0].message).group(1))
    assert _gone(pid)


def test_a_second_threads_network_call_during_the_hook_is_refused_too(armed):
    listener, _ = armed
    report = validate_connector(FIXTURES / "lav-fixture-thread", timeout=30)
    network = [f.message for f in report.findings if f.code == "LAV021"]
    assert any("'localhost'" in m for m in network), network  # the side thread's call
    assert any("'127.0.0.1'" in m for m in network), network  # the main thread's call
    assert listener.accepted == 0


def test_the_static_scan_flags_process_pools_and_forks(tmp_path):
    (tmp_path / "m.py").write_text(
        "import multiprocessing\n"
        "from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor\n"
        "import concurrent.futures as cf\n"
        "cf.ProcessPoolExecutor(max_workers=2)\n"
        "cf.ThreadPoolExecutor()\n"
        "import os\n"
        "os.fork()\n"
    )
    lines = {f.location.rsplit(":", 1)[1]: f.code for f in scan_sources([tmp_path], tmp_path)}
    assert lines == {"1": "LAV081", "2": "LAV081", "4": "LAV081", "7": "LAV082"}


def test_isolation_is_reported(armed):
    report = validate_connector(FIXTURES / "lav-fixture-thread", timeout=30)
    assert report.to_dict()["isolation"] == report.isolation
    if sys.platform.startswith("linux"):
        assert report.isolation == {"subreaper": True, "network_namespace": True} or (
            os.geteuid() != 0
        )
