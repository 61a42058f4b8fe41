"""Calling a step agent: sync or async, object or callable, with a timeout that stops it.

An async agent (``arun`` or an ``async def`` callable) runs as a task on the flow's loop
and is *cancelled* at its timeout. A sync agent runs in a worker thread; Python cannot
kill a thread, so at the timeout its result is discarded and the thread finishes on its
own (``timeout_mode="abandoned"``); retries and fallback then wait for nothing unless
the step sets ``allow_timeout_overlap=True``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from lightagent.bridge import call_async as call_maybe_async
from lightagent.errors import BudgetError, LightAgentError, classify_exception

__all__ = ["AgentOutput", "StepAgentError", "call_agent", "call_maybe_async", "to_jsonable"]

_CODE = re.compile(r"^\[(LA-[A-Z0-9-]+)\]")
# Keywords a LightAgent-like run() understands; passed only when the signature admits them.
_STANDARD_KW = (
    "user_id",
    "result_format",
    "trace",
    "parent_trace_id",
    "run_group_id",
    "metadata",
    "tools",
)


class StepAgentError(LightAgentError):
    """A step agent raised or returned an error (``LA-FLOW-AGENT-ERROR`` unless it carried a code)."""

    default_code = "LA-FLOW-AGENT-ERROR"
    family = "flow"


@dataclass
class AgentOutput:
    """What one agent call produced."""

    content: Any
    trace: list[dict[str, Any]] | None = None


def to_jsonable(value: Any) -> Any:
    """``value`` when it survives JSON, else its ``str`` (so checkpoints never fail on it)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


@functools.lru_cache(maxsize=512)
def _accepted(fn: Callable[..., Any]) -> tuple[frozenset[str], bool]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return frozenset(), False
    names = frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return names, any(p.kind is p.VAR_KEYWORD for p in params)


def _kwargs_for(fn: Callable[..., Any], offered: dict[str, Any]) -> dict[str, Any]:
    try:
        names, var_kw = _accepted(fn)
    except TypeError:  # unhashable callable
        names, var_kw = frozenset(), False
    if "options" in names and var_kw:
        # A LightAgent-style run(query, *, options: RunOptions, **kwargs): every run option
        # the flow offers goes in the one typed object.
        from lightagent import RunOptions
        from lightagent.run.run_options import RUN_OPTION_NAMES

        return {
            "options": RunOptions(**{k: v for k, v in offered.items() if k in RUN_OPTION_NAMES})
        }
    return {k: v for k, v in offered.items() if k in names or (var_kw and k in _STANDARD_KW)}


def _target(agent: Any) -> tuple[Callable[..., Any], bool]:
    """The function to call and whether it is a coroutine function."""
    arun = getattr(agent, "arun", None)
    if callable(arun) and inspect.iscoroutinefunction(arun):
        return arun, True
    run = getattr(agent, "run", None)
    if callable(run) and not inspect.isfunction(agent):
        return run, inspect.iscoroutinefunction(run)
    if callable(arun):
        return arun, False
    is_async = inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(
        getattr(agent, "__call__", None)  # noqa: B004 - an async __call__ on an object
    )
    return agent, is_async


def _output(result: Any) -> AgentOutput:
    if isinstance(result, AgentOutput):
        return result
    if isinstance(result, dict) and ("content" in result or "error" in result):
        error, content, trace = result.get("error"), result.get("content"), result.get("trace")
    elif hasattr(result, "content") and not isinstance(result, (str, bytes)):
        error = getattr(result, "error", None)
        content, trace = result.content, getattr(result, "trace", None)
    else:
        error, content, trace = None, result, None
    if error:
        if isinstance(error, dict):  # RunResult.error is LightAgentError.to_dict()
            code, text = error.get("code"), str(error.get("message") or error)
        else:
            match = _CODE.match(str(error))
            code, text = (match.group(1) if match else getattr(error, "code", None)), str(error)
        code = code if isinstance(code, str) and code.startswith("LA-") else None
        raise StepAgentError(code, text, details={"content": to_jsonable(content)})
    if content is None:
        content = ""
    return AgentOutput(to_jsonable(content), trace if isinstance(trace, list) else None)


class _Overdue(Exception):
    """The step outlived its limit (kept apart from a ``TimeoutError`` the step raises itself)."""


async def _within(awaitable: Any, timeout: float | None) -> Any:
    """``awaitable``'s result, or :class:`_Overdue` once ``timeout`` seconds pass (it is cancelled).

    Not ``asyncio.wait_for``: from Python 3.11 its timeout *is* the built-in ``TimeoutError``,
    so a step that raises one itself would read as the flow's own limit.
    """
    future = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({future}, timeout=timeout)
    except asyncio.CancelledError:  # the flow was cancelled: the step unwinds first
        future.cancel()
        await asyncio.wait({future})
        raise
    if not done:
        future.cancel()
        await asyncio.wait({future})  # a task unwinds; an executor future is marked at once
        raise _Overdue
    return future.result()


def _timeout_error(timeout: float, mode: str) -> BudgetError:
    return BudgetError(
        "LA-FLOW-TIMEOUT",
        f"the step did not finish within {timeout:g}s",
        details={"timeout_mode": mode},
    )


async def call_agent(
    agent: Any,
    query: str,
    offered: dict[str, Any],
    *,
    timeout: float | None,
    executor: Executor | None,
) -> AgentOutput:
    """Run ``agent`` on ``query``; raise :class:`StepAgentError` or ``LA-FLOW-TIMEOUT`` on failure.

    ``offered`` holds the keywords an agent may take (``user_id``, ``result_format``,
    ``trace``, ``metadata``, ``idempotency_key``, ``context`` …); each is passed only when
    the agent's signature names it (the LightAgent-style ones also to ``**kwargs``).
    """
    fn, is_async = _target(agent)
    kwargs = _kwargs_for(fn, offered)
    mode = "cancelled" if is_async else "abandoned"
    try:
        if is_async:
            result = await _within(fn(query, **kwargs), timeout)
        else:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(executor, functools.partial(fn, query, **kwargs))
            result = await _within(future, timeout)
            if inspect.isawaitable(result):
                mode = "cancelled"
                result = await _within(result, timeout)
        return _output(result)
    except _Overdue:
        raise _timeout_error(timeout or 0, mode) from None
    except LightAgentError:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        code = classify_exception(exc, "LA-FLOW-AGENT-ERROR")
        raise StepAgentError(
            code, f"{type(exc).__name__}: {exc}", details={"exception_type": type(exc).__name__}
        ) from exc
