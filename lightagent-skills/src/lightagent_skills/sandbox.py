"""The sandbox seam: how skill scripts (and ``enable_unsafe_python``) code runs, if it runs at all.

lightagent never runs model-reachable code in its own process or in a plain subprocess. A
:class:`SandboxProvider` — your container runner, a bubblewrap/firejail/nsjail wrapper, a
remote execution service — runs a script file and returns a :class:`ScriptResult`. Without
one, the script tools are not offered at all. Every model-initiated run also needs an
approval (:func:`approve_execution`), bound to the script's bytes and arguments, so a
script changed after approval needs a new one.
"""

from __future__ import annotations

import inspect
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import ApprovalError, ConfigurationError, ToolError
from lightagent.toolsets.protocol import BaseToolset, ToolCallContext, ToolDefinition
from lightagent.utf8 import utf8

__all__ = [
    "PythonSandboxToolset",
    "SandboxProvider",
    "ScriptResult",
    "approval_hook",
    "approve_execution",
    "arun_in_sandbox",
    "run_in_sandbox",
]

#: How much of a script's output the model reads.
MAX_OUTPUT_CHARS = 20_000


@dataclass
class ScriptResult:
    """What a sandboxed script did: its exit code, output and whether it was stopped."""

    returncode: int
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_text(self, limit: int = MAX_OUTPUT_CHARS) -> str:
        """The result as the model reads it (JSON; output clipped to ``limit``)."""
        return json.dumps(
            {
                "returncode": self.returncode,
                "timed_out": self.timed_out,
                "stdout": self.stdout[:limit],
                "stderr": self.stderr[: limit // 4],
            },
            ensure_ascii=False,
        )


@runtime_checkable
class SandboxProvider(Protocol):
    """Runs one script in isolation (no host files, no network unless it grants them).

    ``skill_dir`` is the skill's folder (for the script's read-only inputs), or None for
    generated code. May be sync or async; must stop the script after ``timeout`` seconds
    and return ``ScriptResult(timed_out=True)``.
    """

    def run_script(
        self, script: Path, args: Sequence[str], *, skill_dir: Path | None, timeout: float
    ) -> Any: ...


def _check(provider: Any) -> Any:
    if not callable(getattr(provider, "run_script", None)):
        raise ConfigurationError(
            "LA-CONFIG",
            f"sandbox= needs an object with run_script(script, args, *, skill_dir, timeout), "
            f"got {type(provider).__name__}",
            hint="See SandboxProvider in docs/skills.md.",
        )
    return provider


def _result(value: Any) -> ScriptResult:
    if isinstance(value, ScriptResult):
        return value
    raise ToolError(
        "LA-SANDBOX",
        f"the sandbox provider returned {type(value).__name__}, not a ScriptResult",
    )


def run_in_sandbox(
    provider: Any, script: Path, args: list[str], skill_dir: Path | None, timeout: float
) -> ScriptResult:
    """Run ``script`` through ``provider`` from sync code."""
    value = _check(provider).run_script(script, args, skill_dir=skill_dir, timeout=timeout)
    from lightagent.bridge import resolve_sync

    return _result(resolve_sync(value))


async def arun_in_sandbox(
    provider: Any, script: Path, args: list[str], skill_dir: Path | None, timeout: float
) -> ScriptResult:
    """Run ``script`` through ``provider`` from async code (a sync provider runs in a thread)."""
    method = _check(provider).run_script
    if inspect.iscoroutinefunction(method):
        return _result(await method(script, args, skill_dir=skill_dir, timeout=timeout))
    import asyncio

    value = await asyncio.to_thread(method, script, args, skill_dir=skill_dir, timeout=timeout)
    if inspect.isawaitable(value):
        value = await value
    return _result(value)


def approval_hook(value: Any) -> Any:
    """``approval=`` as a ``HumanApprovalHook`` (a hook, a review store or a reviewer callable)."""
    from lightagent.review.hook import HumanApprovalHook

    if value is None or isinstance(value, HumanApprovalHook):
        return value
    if callable(getattr(value, "create_request", None)):
        return HumanApprovalHook(store=value, tools=())
    if callable(value):
        return HumanApprovalHook(reviewer=value, tools=())
    raise ConfigurationError(
        "LA-CONFIG",
        f"approval must be a HumanApprovalHook, a review store or a reviewer, got {type(value).__name__}",
    )


async def approve_execution(
    hook: Any, tool: str, arguments: dict[str, Any], context: ToolCallContext, reason: str
) -> dict[str, Any]:
    """Ask ``hook`` (a ``HumanApprovalHook``) to approve running code; returns the arguments
    to run with (a reviewer may edit them) or raises ``ApprovalError`` naming the decision.

    The approval is bound to ``arguments``, which carry the code's digest.
    """
    from lightagent.hooks import HookContext

    ctx = HookContext(
        phase="before_tool_call",
        payload={"tool_name": tool, "arguments": dict(arguments), "call_id": None},
        trace_id=context.trace_id,
        run_id=context.run_id,
        user_id=context.user_id,
        agent_name=context.agent_name,
        metadata=dict(context.metadata),
        approval_id=context.approval_id,
    )
    decision = await hook.adecide(ctx, force=True, reason=reason)
    if decision.action == "continue":
        return dict(arguments)
    if decision.action == "replace" and isinstance(decision.payload, dict):
        edited = decision.payload.get("arguments")
        if isinstance(edited, dict):
            return dict(edited)
    code = (decision.metadata or {}).get("code") or "LA-APPROVAL"
    raise ApprovalError(
        code, decision.reason or f"{tool} was not approved", details=dict(decision.metadata or {})
    )


class PythonSandboxToolset(BaseToolset):
    """``execute_python_code``: model-written Python, run only in the sandbox and after approval."""

    namespace = "python"
    loop_bound = False

    def __init__(self, sandbox: Any, approval: Any, *, timeout: float = 30.0) -> None:
        super().__init__()
        self.sandbox = _check(sandbox)
        self.approval = approval_hook(approval)
        if self.approval is None:
            raise ConfigurationError(
                "LA-CONFIG", "execute_python_code needs approval= (every run is reviewed)"
            )
        self.timeout = timeout

    def list_tools(self) -> list[ToolDefinition]:
        """The one tool."""
        return [
            ToolDefinition(
                name="execute_python_code",
                description=(
                    "Run a Python script in an isolated sandbox after a reviewer approves it; "
                    "returns its exit code and output."
                ),
                parameters={
                    "type": "object",
                    "properties": {"code": {"type": "string", "description": "The Python source."}},
                    "required": ["code"],
                    "additionalProperties": False,
                },
                metadata={"capability": "python.execute", "requires_sandbox": True},
            )
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: ToolCallContext
    ) -> str:
        """Approve, then run the code as a script in the sandbox."""
        import hashlib

        code = str(arguments.get("code") or "")
        bound = {"code": code, "code_sha256": hashlib.sha256(utf8(code)).hexdigest()}
        approved = await approve_execution(
            self.approval, name, bound, context, "model-written Python code"
        )
        code = str(approved.get("code", code))
        with tempfile.TemporaryDirectory(prefix="lightagent-code-") as tmp:
            script = Path(tmp) / "main.py"
            script.write_text(code, encoding="utf-8")
            result = await arun_in_sandbox(self.sandbox, script, [], None, self.timeout)
        return result.to_text()
