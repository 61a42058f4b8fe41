"""The approval and policy protocols of the kernel: any object that follows them, and
the shorthands that need lightagent-review (``LA-MISSING-EXTRA`` without it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from lightagent import CapabilityGate, CapabilitySpec, HookDecision, PolicyDecision, SecurityContext
from lightagent.errors import ApprovalError, ConfigurationError, PolicyError
from lightagent_control.approval import Approver, approver, argument_digest

RM = CapabilitySpec("fs.rm", write=True, risk=3, requires_approval=True)


class Doorkeeper:
    """An approver of our own: approves calls on ``/tmp`` only."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def wants(self, ctx: Any) -> bool:
        return False

    def steps(self, ctx: Any, *, force: bool = False, reason: str | None = None) -> Any:
        self.asked.append((ctx.phase, dict(ctx.payload["arguments"]), reason))
        if str(ctx.payload["arguments"].get("path", "")).startswith("/tmp"):
            return HookDecision()
        return HookDecision.block("not under /tmp")
        yield  # a decider: a generator, even when it asks nothing


class ReadOnly:
    """A policy engine of our own (``evaluate`` only)."""

    async def evaluate(self, request: Any) -> PolicyDecision:
        if request.capability.write:
            return PolicyDecision.block("read-only")
        return PolicyDecision.allow()


def test_an_object_following_the_approver_protocol_answers_the_gate() -> None:
    keeper = Doorkeeper()
    assert isinstance(keeper, Approver) and approver(keeper) is keeper
    gate = CapabilityGate(approval=keeper)
    assert gate.authorize_sync(RM, "fs", {"path": "/tmp/x"}, SecurityContext()).allowed
    with pytest.raises(ApprovalError) as info:
        gate.authorize_sync(RM, "fs", {"path": "/etc"}, SecurityContext())
    assert info.value.code == "LA-APPROVAL" and "not under /tmp" in info.value.message
    assert [a[0] for a in keeper.asked] == ["capability_invoke", "capability_invoke"]
    assert approver(None) is None and approver(False) is None
    with pytest.raises(ConfigurationError):
        approver(42)


def test_an_engine_with_evaluate_only_is_asked_by_the_gate() -> None:
    gate = CapabilityGate(policy_engine=ReadOnly())
    read = CapabilitySpec("fs.read", read=True)
    assert gate.authorize_sync(read, "fs", {}, SecurityContext()).allowed
    with pytest.raises(PolicyError) as info:
        gate.authorize_sync(CapabilitySpec("fs.write", write=True), "fs", {}, SecurityContext())
    assert "read-only" in info.value.message


def test_the_argument_digest_binds_name_and_arguments() -> None:
    assert argument_digest("rm", {"p": 1}) == argument_digest("rm", {"p": 1})
    assert argument_digest("rm", {"p": 1}) != argument_digest("rm", {"p": 2})
    assert argument_digest("rm", {"p": 1}) != argument_digest("mv", {"p": 1})


def test_the_shorthands_need_lightagent_review_and_the_gate_still_fails_closed(
    tmp_path: Path,
) -> None:
    # ``sys.modules[name] = None`` makes ``import name`` fail as if it were not installed.
    code = """
        import sys
        sys.modules["lightagent_review"] = None
        from lightagent import (
            CapabilityGate, CapabilitySpec, LightAgent, LightAgentError, ScriptedModel,
            SecurityContext,
        )

        for build in (lambda: LightAgent(model=ScriptedModel(["x"]), approval=True),
                      lambda: LightAgent(model=ScriptedModel(["x"]), policy_engine=[print]),
                      lambda: CapabilityGate(approval=lambda request: True)):
            try:
                build()
            except LightAgentError as error:
                print(error.code, error.hint)
        spec = CapabilitySpec("fs.rm", write=True, risk=3, requires_approval=True)
        try:
            CapabilityGate().authorize_sync(spec, "fs", {}, SecurityContext())
        except LightAgentError as error:
            print(error.code)
        """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    hint = "pip install 'lightagent-core[review]' (or pip install lightagent-review)"
    assert out.stdout.split("\n")[:4] == [
        f"LA-MISSING-EXTRA {hint}",
        f"LA-MISSING-EXTRA {hint}",
        f"LA-MISSING-EXTRA {hint}",
        "LA-APPROVAL",
    ]
