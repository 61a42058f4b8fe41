"""Behavioural regression cases scored from traces: :class:`LightEvaluator` and :class:`EvaluationCase`.

A case states what a run must show (output, tool choice, policy events, recovery,
latency, usage, estimated cost, custom checks); the evaluator runs it against a live
agent or a LightFlow (anything with ``arun``/``run`` taking ``result_format`` and
``trace``), a plain callable, or re-scores a run already recorded in a session store
without calling any model. Every unmet expectation is reported, not only the first.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ValidationError
from lightagent.events.trace import TraceSummary, summarize_trace
from lightagent.progress import ProgressLine

__all__ = [
    "EvaluationCase",
    "EvaluationCaseResult",
    "EvaluationReport",
    "LightEvaluator",
]

Check = Callable[[Any, list[dict[str, Any]]], Any]

# Trace types that mean "something went wrong" -- recovery is succeeding after one.
_TROUBLE = frozenset({"error", "step_fallback", "model_retry", "task_failed", "approval_rejected"})


@dataclass
class EvaluationCase:
    """One regression case (the seeds' fields, plus usage, cost and recorded-run selectors).

    ``checks`` are ``fn(result, trace)`` returning ``True``/``None`` (pass), ``False``
    or a message string (fail), or ``(ok, message)``. ``session_id`` / ``run_id`` pick
    the recorded run :meth:`LightEvaluator.rescore` scores.
    """

    name: str
    query: str = ""
    expected_output_contains: Sequence[str] = ()
    expected_tools: Sequence[str] = ()
    forbidden_tools: Sequence[str] = ()
    expected_trace_events: Sequence[str] = ()
    forbidden_trace_events: Sequence[str] = ()
    expect_success: bool = True
    max_latency_ms: float | None = None
    require_recovery: bool = False
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None
    checks: Sequence[Check] = ()
    run_kwargs: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    run_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError(
                "LA-VALIDATION",
                f"EvaluationCase.name must be a non-empty str, got {self.name!r}",
                hint="Give every case a short unique name; reports and pytest ids use it.",
            )
        for attr in ("expected_output_contains", "expected_tools", "forbidden_tools"):
            value = getattr(self, attr)
            if isinstance(value, str):  # a bare string would be checked letter by letter
                setattr(self, attr, (value,))
        for attr in ("expected_trace_events", "forbidden_trace_events"):
            value = getattr(self, attr)
            if isinstance(value, str):
                setattr(self, attr, (value,))


@dataclass
class EvaluationCaseResult:
    """The outcome of one case: ``passed`` and every failed expectation in ``failures``."""

    name: str
    passed: bool
    content: Any = None
    error: Any = None
    failures: list[str] = field(default_factory=list)
    duration_ms: float = 0.0
    trace: list[dict[str, Any]] = field(default_factory=list, repr=False)
    summary: TraceSummary | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tools_called: list[str] = field(default_factory=list)
    recorded: bool = False

    def to_dict(self, *, include_trace: bool = False) -> dict[str, Any]:
        """A JSON-safe dict (the trace only when asked)."""
        data = {
            "name": self.name,
            "passed": self.passed,
            "content": self.content,
            "error": self.error,
            "failures": list(self.failures),
            "duration_ms": self.duration_ms,
            "summary": self.summary.to_dict() if self.summary else None,
            "metadata": self.metadata,
            "tools_called": self.tools_called,
            "recorded": self.recorded,
        }
        if include_trace:
            data["trace"] = self.trace
        return data

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` listing every failure (for a pytest test per case)."""
        if not self.passed:
            raise AssertionError(_describe(self))


@dataclass
class EvaluationReport:
    """The results of a set of cases: totals, pass rate, and a pytest-friendly assertion."""

    results: list[EvaluationCaseResult] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Number of cases."""
        return len(self.results)

    @property
    def passed(self) -> int:
        """Number of cases that passed."""
        return sum(1 for r in self.results if r.passed)

    @property
    def failed(self) -> int:
        """Number of cases that failed."""
        return self.total - self.passed

    @property
    def pass_rate(self) -> float:
        """passed / total (1.0 for no cases)."""
        return round(self.passed / self.total, 4) if self.total else 1.0

    def __getitem__(self, name: str) -> EvaluationCaseResult:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def failures(self) -> dict[str, list[str]]:
        """``{case name: failures}`` of the failed cases."""
        return {r.name: list(r.failures) for r in self.results if not r.passed}

    def to_dict(self) -> dict[str, Any]:
        """Totals and every case as a JSON-safe dict."""
        return {
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "pass_rate": self.pass_rate,
            "results": [r.to_dict() for r in self.results],
        }

    def format(self) -> str:
        """A readable multi-line report: one line per case, failures indented under it."""
        lines = [f"{self.passed}/{self.total} cases passed ({self.pass_rate:.0%})"]
        for r in self.results:
            mark = "PASS" if r.passed else "FAIL"
            lines.append(f"  {mark} {r.name} ({r.duration_ms:.0f} ms)")
            lines.extend(f"      - {f}" for f in r.failures)
        return "\n".join(lines)

    def assert_all_passed(self) -> None:
        """Raise ``AssertionError`` with :meth:`format` when any case failed."""
        if self.failed:
            raise AssertionError(self.format())


def _describe(result: EvaluationCaseResult) -> str:
    return f"evaluation case {result.name!r} failed:\n" + "\n".join(
        f"  - {f}" for f in result.failures
    )


class LightEvaluator:
    """Runs :class:`EvaluationCase` s and scores them from the run's trace.

    ``pricing`` is ``{"input_per_million": $, "output_per_million": $}`` for estimated
    cost; ``progress`` draws a live line on a terminal (None: only when stderr is a TTY).
    """

    def __init__(
        self, *, pricing: Mapping[str, float] | None = None, progress: bool | None = None
    ) -> None:
        self.pricing = dict(pricing) if pricing else None
        self.progress = progress

    # -- running ------------------------------------------------------------------
    def run(self, target: Any, cases: Iterable[EvaluationCase]) -> EvaluationReport:
        """Run every case against ``target`` (an agent, a LightFlow, a callable) in order."""
        items = _cases(cases)
        report = EvaluationReport()
        with ProgressLine("evaluate", total=len(items), enabled=self.progress) as line:
            for case in items:
                report.results.append(self.run_case(target, case))
                line.advance(note=_note(report))
        return report

    async def arun(
        self, target: Any, cases: Iterable[EvaluationCase], *, concurrency: int = 1
    ) -> EvaluationReport:
        """:meth:`run` on the event loop; ``concurrency`` cases at a time, results in case order."""
        items = _cases(cases)
        limit = asyncio.Semaphore(max(1, concurrency))
        report = EvaluationReport()
        with ProgressLine("evaluate", total=len(items), enabled=self.progress) as line:

            async def one(case: EvaluationCase) -> EvaluationCaseResult:
                async with limit:
                    result = await self.arun_case(target, case)
                report.results.append(result)
                line.advance(note=_note(report))
                return result

            results = await asyncio.gather(*(one(c) for c in items))
        return EvaluationReport(list(results))

    def run_case(self, target: Any, case: EvaluationCase) -> EvaluationCaseResult:
        """Run and score one case synchronously."""
        kwargs = {**case.run_kwargs, "result_format": "object", "trace": True}
        started = time.perf_counter()
        try:
            if hasattr(target, "run") and not _plain_callable(target):
                outcome: Any = target.run(case.query, **kwargs)
            else:
                outcome = target(case.query, **case.run_kwargs)
        except Exception as exc:  # a crash is a scored outcome, not an evaluator failure
            outcome = exc
        if inspect.isawaitable(outcome):
            close = getattr(outcome, "close", None)
            if callable(close):
                close()  # never awaited: close it so Python does not warn
            raise ValidationError(
                "LA-VALIDATION",
                f"case {case.name!r}: the target returned a coroutine",
                hint="Use `await LightEvaluator().arun(...)` for async targets.",
            )
        return self.score(case, outcome, duration_ms=(time.perf_counter() - started) * 1000)

    async def arun_case(self, target: Any, case: EvaluationCase) -> EvaluationCaseResult:
        """Run and score one case on the event loop (``target.arun`` when it has one)."""
        kwargs = {**case.run_kwargs, "result_format": "object", "trace": True}
        started = time.perf_counter()
        try:
            if hasattr(target, "arun"):
                outcome: Any = await target.arun(case.query, **kwargs)
            elif hasattr(target, "run") and not _plain_callable(target):
                outcome = await asyncio.to_thread(target.run, case.query, **kwargs)
            else:
                outcome = target(case.query, **case.run_kwargs)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
        except Exception as exc:
            outcome = exc
        return self.score(case, outcome, duration_ms=(time.perf_counter() - started) * 1000)

    # -- recorded sessions ----------------------------------------------------------
    def rescore(self, store: Any, cases: Iterable[EvaluationCase]) -> EvaluationReport:
        """Score runs already recorded in a session store; no model is called.

        ``store`` is a :class:`~lightagent.SessionStore` or a store name/URL. Each case
        names its ``session_id`` and, optionally, ``run_id`` (default: the last run of
        the session whose query equals ``case.query``, or the last run when the case
        has no query).
        """
        from lightagent.events.binding import resolve_session_store

        resolved = resolve_session_store(store)
        items = _cases(cases)
        report = EvaluationReport()
        with ProgressLine("rescore", total=len(items), enabled=self.progress) as line:
            for case in items:
                report.results.append(self._rescore_case(resolved, case))
                line.advance(note=_note(report))
        return report

    def _rescore_case(self, store: Any, case: EvaluationCase) -> EvaluationCaseResult:
        if not case.session_id:
            raise ValidationError(
                "LA-VALIDATION",
                f"case {case.name!r} has no session_id to re-score",
                hint="Set EvaluationCase(session_id=..., run_id=...) to the recorded run.",
            )
        trace = _session_trace(store.events(case.session_id))
        run_id = case.run_id or _pick_run(trace, case.query)
        run = [e for e in trace if e.get("run_id") == run_id] if run_id else []
        if not run:
            raise ValidationError(
                "LA-VALIDATION",
                f"case {case.name!r}: no recorded run {case.run_id or case.query!r} "
                f"in session {case.session_id!r}",
                hint="Check session_id and run_id (or query) against the store's sessions.",
                details={"session_id": case.session_id, "run_id": case.run_id},
            )
        end: dict[str, Any] = next(
            (e["data"] for e in reversed(run) if e.get("type") in ("run_end", "flow_end")), {}
        )
        content = next(
            (
                e["data"].get("content")
                for e in reversed(run)
                if e.get("type") == "model_response" and e["data"].get("content")
            ),
            None,
        )
        error = end.get("error") or (None if end.get("success", True) else "run failed")
        recorded = _Recorded(content=content, trace=run, error=error, usage=end.get("usage"))
        result = self.score(case, recorded, duration_ms=None)
        result.recorded = True
        return result

    # -- scoring --------------------------------------------------------------------
    def score(
        self, case: EvaluationCase, outcome: Any, *, duration_ms: float | None = None
    ) -> EvaluationCaseResult:
        """Score one outcome (a RunResult, a LightFlowResult, a string, an exception).

        ``duration_ms`` is the measured wall-clock latency; None takes the trace's.
        """
        trace, content, error, usage = _unpack(outcome)
        summary = summarize_trace(trace, usage=usage, pricing=self.pricing)
        latency = summary.duration_ms if duration_ms is None else round(duration_ms, 3)
        tools = [str(e["data"].get("name")) for e in trace if e.get("type") == "tool_call"]
        types = {str(e.get("type")) for e in trace}
        failures: list[str] = []
        text = "" if content is None else str(content)
        succeeded = error is None
        if case.expect_success and not succeeded:
            failures.append(f"expected success, got error: {_short(error)}")
        if not case.expect_success and succeeded:
            failures.append("expected the run to fail, it succeeded")
        failures += [
            f"output does not contain {s!r}" for s in case.expected_output_contains if s not in text
        ]
        failures += [f"tool {t!r} was not called" for t in case.expected_tools if t not in tools]
        failures += [f"forbidden tool {t!r} was called" for t in case.forbidden_tools if t in tools]
        failures += [
            f"trace event {t!r} missing" for t in case.expected_trace_events if t not in types
        ]
        failures += [
            f"forbidden trace event {t!r} present"
            for t in case.forbidden_trace_events
            if t in types
        ]
        if case.require_recovery:
            failures += _recovery(trace, summary, succeeded)
        if case.max_latency_ms is not None and latency > case.max_latency_ms:
            failures.append(f"latency {latency:.1f} ms exceeds {case.max_latency_ms} ms")
        total_tokens = (summary.usage or {}).get("total_tokens")
        if case.max_total_tokens is not None:
            if total_tokens is None:
                failures.append("usage was not reported, cannot check max_total_tokens")
            elif total_tokens > case.max_total_tokens:
                failures.append(f"used {total_tokens} tokens, more than {case.max_total_tokens}")
        if case.max_cost_usd is not None:
            cost = summary.estimated_cost_usd
            if cost is None:
                failures.append("no estimated cost (pass pricing= and report usage)")
            elif cost > case.max_cost_usd:
                failures.append(f"estimated cost ${cost:.6f} exceeds ${case.max_cost_usd}")
        for check in case.checks:
            failures += _run_check(check, outcome, trace)
        return EvaluationCaseResult(
            name=case.name,
            passed=not failures,
            content=content,
            error=error,
            failures=failures,
            duration_ms=latency,
            trace=trace,
            summary=summary,
            metadata=dict(case.metadata),
            tools_called=tools,
        )


@dataclass
class _Recorded:
    """A run rebuilt from a session log, scored like a live result."""

    content: Any
    trace: list[dict[str, Any]]
    error: Any
    usage: Any

    @property
    def success(self) -> bool:
        return self.error is None


def _cases(cases: Iterable[EvaluationCase]) -> list[EvaluationCase]:
    items = list(cases)
    names = [str(getattr(c, "name", "")) for c in items]
    bad = [c for c in items if not isinstance(c, EvaluationCase)]
    if bad:
        raise ValidationError(
            "LA-VALIDATION",
            f"cases must be EvaluationCase objects, got {type(bad[0]).__name__}",
            hint="Wrap each case: EvaluationCase(name=..., query=...).",
        )
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValidationError(
            "LA-VALIDATION",
            f"duplicate case names: {', '.join(dupes)}",
            hint="Give every case a unique name; reports are keyed by it.",
        )
    return items


def _plain_callable(target: Any) -> bool:
    return inspect.isfunction(target) or inspect.ismethod(target)


def _note(report: EvaluationReport) -> str:
    return f"{report.passed} passed, {report.failed} failed"


def _unpack(outcome: Any) -> tuple[list[dict[str, Any]], Any, Any, Any]:
    """(trace, content, error, usage) of any outcome the evaluator accepts."""
    if isinstance(outcome, BaseException):
        to_dict = getattr(outcome, "to_dict", None)
        return (
            [],
            None,
            to_dict() if callable(to_dict) else f"{type(outcome).__name__}: {outcome}",
            None,
        )
    if isinstance(outcome, str):
        return [], outcome, None, None
    trace = [dict(e) for e in (getattr(outcome, "trace", None) or [])]
    steps = getattr(outcome, "steps", None)
    if steps is not None and not isinstance(steps, str):
        # A LightFlowResult (its steps a list in step order, or the older mapping by name):
        # the step agents' events join the flow's.
        seen = {(e.get("run_id"), e.get("seq"), e.get("type")) for e in trace}
        for step in steps.values() if isinstance(steps, Mapping) else steps:
            for event in getattr(step, "trace", None) or []:
                if (event.get("run_id"), event.get("seq"), event.get("type")) not in seen:
                    trace.append(dict(event))
    error = getattr(outcome, "error", None)
    if error is None and getattr(outcome, "success", True) is False:
        error = getattr(outcome, "status", "failed")
    return trace, getattr(outcome, "content", None), error, getattr(outcome, "usage", None)


def _session_trace(events: Iterable[Any]) -> list[dict[str, Any]]:
    """Session events as trace dicts; events a run did not map (flow, DAG) keep their own type."""
    from lightagent.events.mapping import trace_type_of

    return [
        {
            "type": trace_type_of(e) or e.type,
            "data": {k: v for k, v in e.data.items() if k not in ("trace_type", "trace_seq")},
            "timestamp": e.timestamp,
            "run_id": e.run_id,
            "trace_id": e.trace_id,
            "parent_trace_id": e.parent_trace_id,
            "run_group_id": e.run_group_id,
        }
        for e in events
    ]


def _pick_run(trace: list[dict[str, Any]], query: str) -> str | None:
    # An agent run opens with run_start, a LightFlow run (recorded with session_store=) with flow_start.
    starts = [e for e in trace if e.get("type") in ("run_start", "flow_start")]
    if query:
        starts = [e for e in starts if e["data"].get("query") == query]
    return str(starts[-1].get("run_id")) if starts else None


def _recovery(trace: list[dict[str, Any]], summary: TraceSummary, succeeded: bool) -> list[str]:
    troubled = summary.retry_count > 0 or any(
        e.get("type") in _TROUBLE
        or (e.get("type") == "tool_result" and e["data"].get("error"))
        or (e.get("type") == "step_end" and int(e["data"].get("retry_count") or 0) > 0)
        for e in trace
    )
    out = []
    if not troubled:
        out.append("recovery required, but nothing failed (no error, retry or fallback)")
    if not succeeded:
        out.append("recovery required, but the run did not succeed")
    return out


def _run_check(check: Check, outcome: Any, trace: list[dict[str, Any]]) -> list[str]:
    name = getattr(check, "__name__", type(check).__name__)
    try:
        verdict = check(outcome, trace)
    except Exception as exc:
        return [f"check {name} raised {type(exc).__name__}: {exc}"]
    if verdict is None or verdict is True:
        return []
    if verdict is False:
        return [f"check {name} failed"]
    if isinstance(verdict, str):
        return [f"check {name}: {verdict}"]
    if isinstance(verdict, tuple) and len(verdict) == 2:
        ok, message = verdict
        return [] if ok else [f"check {name}: {message}"]
    return [f"check {name} returned {verdict!r}, not a bool, str or (ok, message)"]


def _short(error: Any) -> str:
    if isinstance(error, Mapping):
        return f"[{error.get('code')}] {error.get('message')}"
    return str(error)[:300]
