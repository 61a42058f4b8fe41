"""A sandbox provider for the tool generator's tests: a separate, isolated interpreter."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from lightagent import ScriptResult


class ProcessSandbox:
    """A test double for a container runner: each script runs in a new ``python -I`` process.

    It is not isolation (the child sees the host's files); it proves the seam: the script
    runs in another process, with only its arguments, and its result comes back as text.
    """

    def __init__(self) -> None:
        self.runs: list[dict[str, object]] = []

    def run_script(
        self, script: Path, args: list[str], *, skill_dir: Path | None, timeout: float
    ) -> ScriptResult:
        process = subprocess.Popen(
            [sys.executable, "-I", str(script), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            return ScriptResult(-9, stdout, stderr, timed_out=True)
        self.runs.append({"pid": process.pid, "script": script.read_text(), "args": list(args)})
        return ScriptResult(process.returncode, stdout, stderr)


class AsyncProcessSandbox(ProcessSandbox):
    """The same, as an async provider (a remote execution service would be one)."""

    async def run_script(  # type: ignore[override]
        self, script: Path, args: list[str], *, skill_dir: Path | None, timeout: float
    ) -> ScriptResult:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            str(script),
            *args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
            return ScriptResult(-9, timed_out=True)
        text = await asyncio.to_thread(script.read_text)
        self.runs.append({"pid": process.pid, "script": text, "args": list(args)})
        return ScriptResult(process.returncode or 0, stdout.decode(), stderr.decode())


@pytest.fixture
def sandbox() -> ProcessSandbox:
    return ProcessSandbox()


@pytest.fixture
def async_sandbox() -> AsyncProcessSandbox:
    return AsyncProcessSandbox()
