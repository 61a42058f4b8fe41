"""The approval path the gate and the interceptor call: a small protocol, and ``approval=`` read.

The kernel never decides approvals itself: it asks an :class:`Approver` (lightagent-review's
``HumanApprovalHook`` is one) whether a call needs a human (:meth:`Approver.wants`) and
for the human's decision (:meth:`Approver.steps`, a decider of a
:class:`~lightagent.hooks.HookDecision`). An approver that lets a call through records
``(call_id, argument_digest(tool, arguments))`` in ``ctx.state["approved_calls"]`` so the
same call is not asked twice in one run.

``approval=`` (of ``LightAgent``, ``CapabilityGate`` and ``CapabilityRegistry``) takes an
approver, or a shorthand that :func:`approver` builds into lightagent-review's
``HumanApprovalHook``: ``True`` (an in-memory review store), a review store (an object
with ``create_request``) or a reviewer callable. A shorthand without lightagent-review
installed is ``LA-MISSING-EXTRA`` naming ``pip install 'lightagent-core[review]'``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from lightagent.deciders import Decider
from lightagent.digest import canonical_digest
from lightagent.errors import ConfigurationError
from lightagent.hooks.types import HookContext, HookDecision

__all__ = ["Approver", "approver", "argument_digest", "is_approver"]


def argument_digest(action_name: str | None, arguments: Any) -> str:
    """The digest a decision is bound to: the action (tool) name and its canonical arguments."""
    return canonical_digest({"action": action_name, "arguments": arguments})


@runtime_checkable
class Approver(Protocol):
    """What the gate and the interceptor call on an approval path."""

    def wants(self, ctx: HookContext) -> bool:
        """Whether the call in ``ctx`` needs approval by itself (phase and tool filter)."""
        ...

    def steps(
        self, ctx: HookContext, *, force: bool = False, reason: str | None = None
    ) -> Decider[HookDecision]:
        """Approve, deny or park the call in ``ctx``, as a decider (``force`` skips :meth:`wants`)."""
        ...


def is_approver(value: Any) -> bool:
    """Whether ``value`` follows :class:`Approver` (``wants`` and ``steps``)."""
    return callable(getattr(value, "wants", None)) and callable(getattr(value, "steps", None))


def approver(approval: Any) -> Any:
    """The approval path for ``approval=``: an :class:`Approver` as it is, ``True`` (a new
    in-memory ``HumanApprovalHook``), a review store, a reviewer callable, or None/False (none)."""
    if approval is None or approval is False:
        return None
    if is_approver(approval):
        return approval
    # Built from True, a store or a reviewer, it answers only what policy, capabilities or
    # screens require: no tool and no handoff needs it by itself.
    only: tuple[str, ...] = ("before_tool_call",)
    if approval is True:
        return _approval_hook()(tools=(), phases=only)
    if callable(getattr(approval, "create_request", None)):
        return _approval_hook()(store=approval, tools=(), phases=only)
    if callable(approval):
        return _approval_hook()(reviewer=approval, tools=(), phases=only)
    raise ConfigurationError(
        "LA-CONFIG",
        f"approval= must be a HumanApprovalHook, a review store or a reviewer callable, got {type(approval).__name__}",
    )


def _approval_hook() -> Any:
    """lightagent-review's ``HumanApprovalHook`` (``LA-MISSING-EXTRA`` without it)."""
    from lightagent.lazy import plugin_name

    return plugin_name("HumanApprovalHook", "approval=")
