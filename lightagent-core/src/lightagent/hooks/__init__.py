"""Runtime hooks: ordered middleware that observes, replaces, blocks, retries or falls back.

A hook is a callable ``hook(ctx)`` or an object with a method named after the phase
(``before_tool_call(ctx)``); sync or async. Its result is normalised the seeds' way:
``None``/``True`` continue, ``False`` blocks, a string blocks with that reason, a dict
(``{"allowed": False}``, ``{"action": ...}``, ``{"payload": ...}``) or a
:class:`HookDecision`. Hooks run in list order; ``replace`` chains the payload into
later hooks; the first ``block``/``retry``/``fallback`` ends the chain.

Plain hooks are failure-isolated: one that raises is recorded (and traced) and the chain
goes on. A hook marked ``fail_closed`` blocks instead; lightagent-review's ``PolicyHook``
wraps security-relevant callbacks so they fail closed on an exception, an invalid result
or a timeout.

This package holds the vocabulary hooks speak; the ``HookManager`` that runs them is
lightagent-control's (``hooks=``, ``agent.hooks``).
"""

from __future__ import annotations

from lightagent.hooks import types as _types
from lightagent.hooks.types import *  # noqa: F403 - the hook types and phase names

__all__ = list(_types.__all__)
