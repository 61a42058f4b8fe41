"""``PolicyHook``: a hook that fails closed on an exception, an invalid result or a timeout.

The kernel's ``HookManager`` runs it like any hook with ``steps`` and ``applies``; it never
raises, so its own failure handling (block, or continue when asked) is what decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ConfigurationError
from lightagent.hooks.types import (
    HookContext,
    HookDecision,
    check_phases,
    hook_name,
    normalize_hook_result,
    phase_target,
)

__all__ = ["PolicyHook"]


@dataclass(frozen=True)
class PolicyHook:
    """A fail-closed hook: an exception, an invalid result or a timeout blocks.

    ``phases`` limits where it runs (``None`` = every phase). ``failure_mode="continue"``
    makes failures non-blocking (they are still traced). A sync handler with a
    ``timeout`` runs in a worker thread; a thread cannot be killed, so a handler that
    overruns keeps running in the background after the call was blocked. Written once
    as a decider (:meth:`steps`); calling it and :meth:`acall` drive that.
    """

    handler: Callable[..., Any]
    phases: frozenset[str] | None = None
    failure_mode: str = "block"
    timeout: float | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if not callable(self.handler):
            raise ConfigurationError(
                "LA-HOOK-INVALID",
                f"PolicyHook needs a callable handler, got {type(self.handler).__name__}",
            )
        object.__setattr__(self, "phases", check_phases(self.phases, "PolicyHook"))
        if self.failure_mode not in ("block", "continue"):
            raise ConfigurationError(
                "LA-HOOK-INVALID",
                f"failure_mode must be 'block' or 'continue', got {self.failure_mode!r}",
            )
        if self.timeout is not None and not (
            isinstance(self.timeout, (int, float))
            and not isinstance(self.timeout, bool)
            and self.timeout > 0
        ):
            raise ConfigurationError(
                "LA-HOOK-INVALID", f"timeout must be > 0, got {self.timeout!r}"
            )
        if self.name is None:
            object.__setattr__(self, "name", hook_name(self.handler))

    def applies(self, phase: str) -> bool:
        """Whether this hook runs at ``phase``."""
        return self.phases is None or phase in self.phases

    def _failed(
        self, ctx: HookContext, error: BaseException, timed_out: bool = False
    ) -> HookDecision:
        kind = "timed out" if timed_out else f"failed ({type(error).__name__})"
        meta = {
            "hook_failure": {
                "hook": self.name,
                "error_type": "TimeoutError" if timed_out else type(error).__name__,
                "failure_mode": self.failure_mode,
            }
        }
        if self.failure_mode == "continue":
            return HookDecision("continue", metadata=meta)
        code = "LA-HOOK-TIMEOUT" if timed_out else "LA-HOOK"
        return HookDecision.block(f"[{code}] policy hook {self.name} {kind}; failing closed", meta)

    def steps(self, ctx: HookContext) -> Decider[HookDecision]:
        """The handler's decision as a decider (:mod:`lightagent.deciders`); never raises."""
        if not self.applies(ctx.phase):
            return HookDecision()
        fn = phase_target(self.handler, ctx.phase)
        try:
            if fn is None:
                raise TypeError(f"policy hook {self.name} has no callable handler")
            return normalize_hook_result((yield Call(fn, (ctx,), timeout=self.timeout)))
        except TimeoutError as exc:
            return self._failed(ctx, exc, timed_out=True)
        except Exception as exc:
            return self._failed(ctx, exc)

    def __call__(self, ctx: HookContext) -> HookDecision:
        """Run the handler from sync code."""
        return decide(self.steps(ctx))

    async def acall(self, ctx: HookContext) -> HookDecision:
        """Run the handler from async code."""
        return await adecide(self.steps(ctx))
