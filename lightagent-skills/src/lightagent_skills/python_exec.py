"""The README's safe-execution utilities: ``execute_python_code``, ``execute_python_file``
and ``execute_python_code_stream``, run in a sandbox provider, never in this process.

Each takes the :class:`~lightagent_skills.sandbox.SandboxProvider` to run in (``sandbox=``,
or the agent's: ``agent.sandbox``); without one it is ``LA-SANDBOX`` — lightagent has no
fallback that runs code on the host. Time is bounded (``timeout``, passed to the
provider, which must stop the script), output is clipped (``max_output_chars``), and
memory, files and network are what the provider grants (its contract: isolation). For the
model, the same code path is the ``execute_python_code`` tool that
``LightAgent(enable_unsafe_python=True, sandbox=..., approval=...)`` offers, where every
run is also approved by a person first.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from lightagent.errors import ToolError, ValidationError

from lightagent_skills.sandbox import MAX_OUTPUT_CHARS, ScriptResult, run_in_sandbox

__all__ = ["execute_python_code", "execute_python_code_stream", "execute_python_file"]


def _sandbox(sandbox: Any) -> Any:
    if sandbox is None:
        raise ToolError(
            "LA-SANDBOX",
            "Python code runs only in a sandbox provider; none was given",
            hint="Pass sandbox= (a SandboxProvider: a container, nsjail, a remote runner).",
        )
    return sandbox


def _clipped(result: ScriptResult, limit: int) -> ScriptResult:
    result.stdout, result.stderr = result.stdout[:limit], result.stderr[:limit]
    return result


def execute_python_code(
    code: str,
    timeout: float = 30,
    *,
    sandbox: Any = None,
    input_data: Any = None,
    max_output_chars: int = MAX_OUTPUT_CHARS,
) -> ScriptResult:
    """Run ``code`` as a script in ``sandbox``; ``input_data`` (JSON-able) is the file
    ``input.json`` beside it, its path the script's first argument."""
    if not isinstance(code, str) or not code.strip():
        raise ValidationError("LA-VALIDATION", "execute_python_code needs the code to run")
    provider = _sandbox(sandbox)
    with tempfile.TemporaryDirectory(prefix="lightagent-code-") as tmp:
        script = Path(tmp) / "main.py"
        script.write_text(code, encoding="utf-8")
        args: list[str] = []
        if input_data is not None:
            data = Path(tmp) / "input.json"
            data.write_text(json.dumps(input_data, ensure_ascii=False), encoding="utf-8")
            args.append(str(data))
        result = run_in_sandbox(provider, script, args, None, float(timeout))
    return _clipped(result, max_output_chars)


def execute_python_file(
    file_path: str | Path,
    timeout: float = 30,
    args: Sequence[str] = (),
    *,
    sandbox: Any = None,
    max_output_chars: int = MAX_OUTPUT_CHARS,
) -> ScriptResult:
    """Run the script at ``file_path`` (it must exist) in ``sandbox`` with ``args``."""
    path = Path(file_path)
    if not path.is_file():
        raise ValidationError("LA-VALIDATION", f"no such Python file: {str(path)!r}")
    provider = _sandbox(sandbox)
    result = run_in_sandbox(provider, path, [str(a) for a in args], None, float(timeout))
    return _clipped(result, max_output_chars)


def execute_python_code_stream(
    code: str,
    timeout: float = 30,
    chunk_size: int = 1024,
    *,
    sandbox: Any = None,
    max_output_chars: int = MAX_OUTPUT_CHARS,
) -> Iterator[str]:
    """:func:`execute_python_code`, its output given in ``chunk_size`` pieces (the sandbox
    returns the output when the script ends; the pieces follow then)."""
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValidationError("LA-VALIDATION", f"chunk_size must be >= 1, got {chunk_size!r}")
    result = execute_python_code(code, timeout, sandbox=sandbox, max_output_chars=max_output_chars)
    text = result.stdout + result.stderr
    for start in range(0, len(text), chunk_size):
        yield text[start : start + chunk_size]
