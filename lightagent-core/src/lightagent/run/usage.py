"""The provider's usage as the loop records it: counts reported below zero are kept on record.

A negative count is read as 0 (:class:`~lightagent.models.base.Usage`), so that it can never
refill a budget; the loop records what the provider actually reported as a ``usage_clamped``
event, for every response (the run's own requests and a capability's model calls alike).
"""

from __future__ import annotations

from typing import Any

from lightagent.run.spec import RunSpec

__all__ = ["usage_clamped"]


def usage_clamped(spec: RunSpec, usage: Any, **where: Any) -> None:
    """Record the counts a provider reported below zero (read as 0: never a refill)."""
    ctx = spec.ctx
    if usage is not None and usage.clamped and ctx.active:
        ctx.emit("usage_clamped", {"reported": usage.clamped, **where})
