"""Run and session budgets the loop consults: checked before a request, settled after it.

:class:`BudgetLimits` caps model calls, tool calls, input/output/total tokens, wall-clock
seconds and cost, ``per="run"`` (the default) or ``per="session"``. :class:`RunBudget` is
one run's ledger: the state machine asks it before each model request (estimated from the
request) and each tool round, and settles it from the provider's usage afterwards. A
refused step commits nothing and ends the run with :class:`BudgetExceeded`; each settled
step is a ``budget_consumed`` event (``budget.consumed`` in the session log), which is
what a session's ledger is restored from after a restart.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from lightagent.errors import BudgetError, ConfigurationError

__all__ = [
    "BUDGET_DIMENSIONS",
    "BudgetExceeded",
    "BudgetLimits",
    "RunBudget",
    "as_limits",
    "session_spent",
]

#: What a budget can cap, in the order they are checked.
BUDGET_DIMENSIONS = (
    "model_calls",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "tokens",
    "seconds",
    "cost",
)


@dataclass(frozen=True)
class BudgetLimits:
    """Caps on one run (``per="run"``) or on a whole session (``per="session"``).

    ``None`` leaves a dimension uncapped. ``cost`` is in the currency of
    ``input_token_price``/``output_token_price`` (price per token); ``tokens`` caps input
    plus output tokens.
    """

    model_calls: int | None = None
    tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens: int | None = None
    seconds: float | None = None
    cost: float | None = None
    per: str = "run"
    input_token_price: float = 0.0
    output_token_price: float = 0.0
    #: Characters per token when a request's input tokens are estimated.
    chars_per_token: float = 4.0

    def __post_init__(self) -> None:
        if self.per not in ("run", "session"):
            raise ConfigurationError(
                "LA-CONFIG",
                f"BudgetLimits(per={self.per!r}) must be 'run' or 'session'",
                hint="Use per='run' (each run) or per='session' (all runs of a session_id).",
                details={"parameter": "per"},
            )
        for name in (*BUDGET_DIMENSIONS, "input_token_price", "output_token_price"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"BudgetLimits({name}={value!r}) must be a number >= 0 or None",
                    hint="Give each limit as a non-negative number; None leaves it uncapped.",
                    details={"parameter": name},
                )
        if not isinstance(self.chars_per_token, (int, float)) or self.chars_per_token <= 0:
            raise ConfigurationError("LA-CONFIG", "BudgetLimits(chars_per_token=) must be > 0")

    def capped(self) -> dict[str, float]:
        """The dimensions this budget caps and their limits."""
        return {d: getattr(self, d) for d in BUDGET_DIMENSIONS if getattr(self, d) is not None}

    def to_dict(self) -> dict[str, Any]:
        """Every field (JSON-friendly)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class BudgetExceeded(BudgetError):
    """A budget refused the next step: ``dimension`` would go from ``used`` past ``limit``.

    The run ends with it (``code`` ``LA-BUDGET``, the seeds' code); the refused usage
    was not committed.
    """

    default_code = "LA-BUDGET"

    def __init__(
        self,
        dimension: str,
        limit: float,
        used: float,
        *,
        requested: float = 0,
        scope: str = "run",
    ) -> None:
        self.dimension = dimension
        self.limit = limit
        self.used = used
        self.requested = requested
        self.scope = scope
        super().__init__(
            "LA-BUDGET",
            f"{scope} budget exceeded: {dimension} would reach {_fmt(used + requested)} "
            f"of {_fmt(limit)} (used {_fmt(used)})",
            hint=f"Raise BudgetLimits({dimension}=...) (per={scope!r}) or give the run less work.",
            details={
                "exit_reason": "budget_exceeded",
                "dimension": dimension,
                "limit": limit,
                "used": used,
                "requested": requested,
                "scope": scope,
            },
        )


def as_limits(value: Any, where: str = "budget_limits") -> tuple[BudgetLimits, ...]:
    """``budget_limits=`` as a tuple: a :class:`BudgetLimits`, a dict of its fields, or several."""
    if value is None:
        return ()
    if isinstance(value, BudgetLimits):
        return (value,)
    if isinstance(value, Mapping):
        try:
            return (BudgetLimits(**dict(value)),)
        except TypeError as exc:
            raise ConfigurationError(
                "LA-CONFIG",
                f"{where}= has an unknown field: {exc}",
                hint=f"The fields are {', '.join(f.name for f in fields(BudgetLimits))}.",
                details={"parameter": where},
            ) from exc
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        out: list[BudgetLimits] = []
        for item in value:
            out.extend(as_limits(item, where))
        return tuple(out)
    raise ConfigurationError(
        "LA-CONFIG",
        f"{where}= must be a BudgetLimits, a dict of its fields or a list of them, "
        f"got {type(value).__name__}",
        hint="Pass budget_limits=BudgetLimits(model_calls=10, per='session').",
        details={"parameter": where},
    )


def _zero() -> dict[str, float]:
    return dict.fromkeys(BUDGET_DIMENSIONS, 0)


def session_spent(events: Iterable[Any]) -> dict[str, float]:
    """What a session's earlier runs consumed: the sum of its ``budget.consumed`` events."""
    total = _zero()
    for event in events:
        if getattr(event, "type", None) != "budget.consumed":
            continue
        delta = (getattr(event, "data", None) or {}).get("delta") or {}
        for key in BUDGET_DIMENSIONS:
            value = delta.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                total[key] += value  # a negative delta (an old log) never refills a budget
    return total


class RunBudget:
    """One run's ledger over its limits (state of the run, never of the agent).

    ``check_*`` raise :class:`BudgetExceeded` without committing anything; ``settle_*``
    commit and return the delta for the ``budget_consumed`` event.
    """

    def __init__(self, limits: Iterable[BudgetLimits]) -> None:
        self.limits = tuple(limits)
        self.run_used = _zero()
        self.session_used = _zero()
        #: Whether the session's earlier usage still has to be read from its log.
        self.needs_session = any(lim.per == "session" for lim in self.limits)
        self.started = time.monotonic()
        self._price = next(
            (
                (lim.input_token_price, lim.output_token_price)
                for lim in self.limits
                if lim.input_token_price or lim.output_token_price
            ),
            (0.0, 0.0),
        )
        self._cpt = min((lim.chars_per_token for lim in self.limits), default=4.0)

    def restore(self, spent: Mapping[str, float]) -> None:
        """Start the session ledger from what earlier runs of the session consumed."""
        for key in BUDGET_DIMENSIONS:
            self.session_used[key] = float(spent.get(key, 0) or 0)
        self.needs_session = False

    def absorb(self, spent: Mapping[str, float]) -> None:
        """Count what other runs of the session consumed since this run started."""
        for key in BUDGET_DIMENSIONS:
            self.session_used[key] += float(spent.get(key, 0) or 0)

    # -- estimates --------------------------------------------------------------------
    def estimate_request(self, request: Any) -> dict[str, float]:
        """What a model request is expected to consume, before it goes out."""
        body = {"messages": request.messages, "tools": request.tools}
        text = json.dumps(body, ensure_ascii=False, default=str)
        input_tokens = math.ceil(len(text) / self._cpt)
        options = request.options or {}
        output = options.get("max_completion_tokens") or options.get("max_tokens") or 0
        # any reply takes at least one token: a spent output budget refuses the request
        output = max(int(output), 1) if isinstance(output, (int, float)) else 1
        return self._delta(model_calls=1, input_tokens=input_tokens, output_tokens=output)

    def _delta(
        self,
        *,
        model_calls: int = 0,
        tool_calls: int = 0,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> dict[str, float]:
        pin, pout = self._price
        return {
            "model_calls": model_calls,
            "tool_calls": tool_calls,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "tokens": input_tokens + output_tokens,
            "seconds": 0,
            "cost": input_tokens * pin + output_tokens * pout,
        }

    # -- checks -----------------------------------------------------------------------
    def check(self, delta: Mapping[str, float]) -> None:
        """Raise :class:`BudgetExceeded` if ``delta`` on top of what is used passes a limit,
        or if what is settled already passed one (a reply can spend more than estimated):
        an exceeded budget refuses every further step."""
        elapsed = time.monotonic() - self.started
        for lim in self.limits:
            used = self.run_used if lim.per == "run" else self.session_used
            for dimension, limit in lim.capped().items():
                have = used[dimension] + (elapsed if dimension == "seconds" else 0)
                want = delta.get(dimension, 0)
                if dimension == "seconds":
                    if have >= limit:  # time cannot be estimated ahead: refuse once spent
                        raise BudgetExceeded(dimension, limit, round(have, 3), scope=lim.per)
                elif have > limit or (want and have + want > limit):
                    raise BudgetExceeded(dimension, limit, have, requested=want, scope=lim.per)

    def check_model(self, request: Any) -> dict[str, float]:
        """Check a model request before it goes out; returns its estimate."""
        estimate = self.estimate_request(request)
        self.check(estimate)
        return estimate

    def check_tools(self, count: int) -> None:
        """Check a round of ``count`` tool calls before any of them runs."""
        self.check(self._delta(tool_calls=count))

    # -- settling ---------------------------------------------------------------------
    def settle_model(self, estimate: Mapping[str, float], usage: Any) -> dict[str, float]:
        """Commit one model call from the provider's usage (the estimate when it gave none)."""
        if usage is not None:
            delta = self._delta(
                model_calls=1,
                input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            )
        else:
            delta = dict(estimate)
        return self._commit(delta)

    def settle_tools(self, count: int) -> dict[str, float]:
        """Commit a round of ``count`` tool calls."""
        return self._commit(self._delta(tool_calls=count))

    def settle_time(self) -> dict[str, float]:
        """Commit the run's wall-clock seconds (once, at the end of the run)."""
        seconds = round(time.monotonic() - self.started, 6)
        delta = dict.fromkeys(BUDGET_DIMENSIONS, 0.0)
        delta["seconds"] = seconds
        return self._commit(delta)

    def _commit(self, delta: Mapping[str, float]) -> dict[str, float]:
        for key, value in delta.items():
            self.run_used[key] += value
            self.session_used[key] += value
        return {k: v for k, v in delta.items() if v}

    def remaining(self) -> dict[str, dict[str, float]]:
        """Per scope, what is left of each capped dimension."""
        out: dict[str, dict[str, float]] = {}
        for lim in self.limits:
            used = self.run_used if lim.per == "run" else self.session_used
            scope = out.setdefault(lim.per, {})
            for dimension, limit in lim.capped().items():
                left = limit - used[dimension]
                scope[dimension] = min(scope.get(dimension, left), left)
        return out


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"
