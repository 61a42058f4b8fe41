"""One declared step of a flow and the checks on its options."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ValidationError

__all__ = ["LightFlowStep", "make_step"]


@dataclass(frozen=True)
class LightFlowStep:
    """A step: its agent, dependencies and controls. Built by :meth:`LightFlow.step`.

    ``max_retry`` is the total number of attempts (at least 1), as in the seeds.
    ``retry_backoff`` is the first wait between attempts (seconds, doubled each time and
    capped by ``retry_backoff_max``); ``None`` takes the flow's default.
    """

    name: str
    agent: Any
    depends_on: tuple[str, ...] = ()
    query: str | Callable[..., Any] | None = None
    timeout: float | None = None
    max_retry: int = 1
    cancel_if: Callable[[dict[str, Any]], Any] | None = None
    fallback_agent: Any = None
    requires_approval: bool = False
    approval_handler: Callable[..., Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tools: tuple[Any, ...] = ()
    allow_timeout_overlap: bool = False
    retry_backoff: float | None = None
    retry_backoff_max: float | None = None


def _bad(message: str, **details: Any) -> ValidationError:
    return ValidationError("LA-FLOW-STEP", message, details=details)


def _is_agent(obj: Any) -> bool:
    return (
        callable(getattr(obj, "arun", None)) or callable(getattr(obj, "run", None)) or callable(obj)
    )


def _seconds(value: Any, option: str, name: str, *, allow_zero: bool = False) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise _bad(f"step {name!r}: {option} must be a number of seconds", step=name, option=option)
    if value < 0 or (value == 0 and not allow_zero):
        raise _bad(
            f"step {name!r}: {option} must be positive, got {value}", step=name, option=option
        )
    return float(value)


def make_step(
    name: Any,
    *,
    agent: Any,
    depends_on: str | Sequence[str] | None = None,
    query: Any = None,
    timeout: Any = None,
    max_retry: Any = 1,
    cancel_if: Any = None,
    fallback_agent: Any = None,
    requires_approval: bool = False,
    approval_handler: Any = None,
    metadata: dict[str, Any] | None = None,
    tools: Sequence[Any] | None = None,
    allow_timeout_overlap: bool = False,
    retry_backoff: Any = None,
    retry_backoff_max: Any = None,
) -> LightFlowStep:
    """Check every option of a step and build it; bad input raises ``LA-FLOW-STEP``."""
    if not isinstance(name, str) or not name.strip():
        raise _bad(f"a step name must be a non-empty string, got {name!r}", option="name")
    if agent is None or not _is_agent(agent):
        raise _bad(
            f"step {name!r}: agent must have run()/arun() or be callable, got {type(agent).__name__}",
            step=name,
            option="agent",
        )
    if fallback_agent is not None and not _is_agent(fallback_agent):
        raise _bad(
            f"step {name!r}: fallback_agent must have run()/arun() or be callable", step=name
        )
    if depends_on is None:
        deps: tuple[str, ...] = ()
    elif isinstance(depends_on, str):
        deps = (depends_on,)
    else:
        deps = tuple(depends_on)
    for dep in deps:
        if not isinstance(dep, str):
            raise _bad(f"step {name!r}: depends_on holds step names, got {dep!r}", step=name)
    if len(set(deps)) != len(deps):
        raise _bad(f"step {name!r}: depends_on lists a step twice", step=name)
    if query is not None and not isinstance(query, str) and not callable(query):
        raise _bad(f"step {name!r}: query must be a str or a callable", step=name, option="query")
    if isinstance(max_retry, bool) or not isinstance(max_retry, int) or max_retry < 1:
        raise _bad(
            f"step {name!r}: max_retry is the number of attempts, an int >= 1; got {max_retry!r}",
            step=name,
            option="max_retry",
        )
    for option, fn in (("cancel_if", cancel_if), ("approval_handler", approval_handler)):
        if fn is not None and not callable(fn):
            raise _bad(f"step {name!r}: {option} must be callable", step=name, option=option)
    if metadata is not None and not isinstance(metadata, dict):
        raise _bad(f"step {name!r}: metadata must be a dict", step=name, option="metadata")
    return LightFlowStep(
        name=name,
        agent=agent,
        depends_on=deps,
        query=query,
        timeout=_seconds(timeout, "timeout", name),
        max_retry=max_retry,
        cancel_if=cancel_if,
        fallback_agent=fallback_agent,
        requires_approval=bool(requires_approval),
        approval_handler=approval_handler,
        metadata=dict(metadata or {}),
        tools=tuple(tools or ()),
        allow_timeout_overlap=bool(allow_timeout_overlap),
        retry_backoff=_seconds(retry_backoff, "retry_backoff", name, allow_zero=True),
        retry_backoff_max=_seconds(retry_backoff_max, "retry_backoff_max", name, allow_zero=True),
    )
