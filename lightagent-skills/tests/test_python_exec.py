"""Issue 28, item 8: the README's execute_python_* utilities run in the sandbox provider only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lightagent import LightAgentError
from lightagent_skills import (
    ScriptResult,
    execute_python_code,
    execute_python_code_stream,
    execute_python_file,
)


class ProcessSandbox:
    """A test double for the sandbox seam (a real child process, no isolation): it records
    what it ran, so the test sees the code went through the provider."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, float]] = []

    def run_script(self, script: Path, args, *, skill_dir, timeout: float) -> ScriptResult:
        self.ran.append((script.name, timeout))
        done = subprocess.run(
            [sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout
        )
        return ScriptResult(done.returncode, done.stdout, done.stderr)


def test_code_runs_in_the_provider_with_its_limits() -> None:
    sandbox = ProcessSandbox()
    result = execute_python_code(
        "import json, sys\nprint(json.load(open(sys.argv[1]))['n'] * 2)",
        timeout=20,
        sandbox=sandbox,
        input_data={"n": 21},
    )
    assert result.returncode == 0 and result.stdout.strip() == "42"
    assert sandbox.ran == [("main.py", 20.0)]
    big = execute_python_code("print('x' * 5000)", sandbox=sandbox, max_output_chars=100)
    assert len(big.stdout) == 100


def test_a_file_and_a_stream(tmp_path: Path) -> None:
    script = tmp_path / "hello.py"
    script.write_text("import sys\nprint('hi', *sys.argv[1:])", encoding="utf-8")
    sandbox = ProcessSandbox()
    assert execute_python_file(script, args=["there"], sandbox=sandbox).stdout == "hi there\n"
    chunks = list(execute_python_code_stream("print('abcdef')", chunk_size=3, sandbox=sandbox))
    assert chunks == ["abc", "def", "\n"]


def test_without_a_sandbox_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(LightAgentError) as info:
        execute_python_code(f"open({str(marker)!r}, 'w').write('x')")
    assert info.value.code == "LA-SANDBOX" and not marker.exists()
    with pytest.raises(LightAgentError):
        list(execute_python_code_stream("print(1)"))
