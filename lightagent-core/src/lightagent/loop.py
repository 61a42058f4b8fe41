"""The agent loop's public entry points: the state machine and the tool-call idempotency key.

The loop is written once (:func:`run_machine`, a generator of effects); the drivers in
:mod:`lightagent.run` perform those effects synchronously or on an event loop.
"""

from __future__ import annotations

from lightagent.run.ids import idempotency_key
from lightagent.run.machine import pending_tool_calls, run_machine

__all__ = ["idempotency_key", "pending_tool_calls", "run_machine"]
