"""The executor seam: what carries out a flow run and each of its steps.

A flow without an executor runs everything in this process (the default). An executor
(``LightFlow(executor=...)``) wraps two things, and nothing else changes:

- ``run_flow(flow, plan, body)``: one execution of a run (a run, a resume or a rerun).
  ``body()`` performs it here and returns the :class:`~lightagent_flow.LightFlowResult`;
  the executor returns that, or a recorded ``LightFlowResult.to_dict()``.
  ``plan`` is plain data (JSON-safe) from which :meth:`LightFlow.execute_plan` performs the
  same execution again, in another process, e.g. when a durable engine recovers it.
- ``run_step(step, key, body)``: one step (the :class:`~lightagent_flow.LightFlowStep`, its
  idempotency key). ``body()`` performs it and returns the step result as a dict
  (:meth:`~lightagent_flow.LightFlowStepResult.to_dict`); the executor may return a
  recorded dict instead of calling it.

``bind(flow)`` is called once, when the flow takes the executor. An executor whose steps
must start in a fixed order sets ``max_concurrency = 1``: the flow then runs one step at a
time, in declaration order among the ready ones.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

__all__ = ["FlowExecutor"]


@runtime_checkable
class FlowExecutor(Protocol):
    """What ``LightFlow(executor=)`` takes (see the module docstring)."""

    def bind(self, flow: Any) -> None:
        """Called once with the flow that takes this executor."""

    async def run_flow(
        self, flow: Any, plan: dict[str, Any], body: Callable[[], Awaitable[Any]]
    ) -> Any:
        """Carry out one execution of a run; return what ``body()`` returns."""

    async def run_step(
        self, step: Any, key: str, body: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        """Carry out one step; return its result as a dict."""
