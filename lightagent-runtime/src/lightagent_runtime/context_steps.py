"""Context budgets in the loop: before a request that does not fit, trim, then summarize.

The decision is taken at a step boundary of the state machine (the budgets step's
``before_request``: both drivers, no driver change): when the messages
of the next request exceed the run's ``ContextBudget``, oversized tool results are
spilled to ``tool-result:sha256:`` references, then the oldest message groups are dropped
(an assistant ``tool_calls`` message always with all its results), never the leading
system messages (the instructions), the conversation's first user message (the first
goal) or the run's own question. What was dropped is then summarized — by the compactor's
``summarizer`` when it has one, else through the run's model — and the summary takes its
place. It is a ``context_compacted`` event; the session log is appended to, never rewritten.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from lightagent.errors import ConfigurationError, ModelError
from lightagent.models.base import ModelRequest, ModelResponse
from lightagent.run.effects import CallModel
from lightagent.run.spec import RunSpec
from lightagent.run.usage import usage_clamped

from lightagent_runtime.budget_steps import budget_check_model, budget_settle
from lightagent_runtime.budgets import BudgetExceeded, RunBudget

__all__ = ["SUMMARY_INSTRUCTIONS", "SUMMARY_PREFIX", "check_context_settings", "fit_context"]

#: The same prefix as ``lightagent.events.projector.SUMMARY_PREFIX`` (a test keeps them equal).
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"

SUMMARY_INSTRUCTIONS = (
    "Summarize the conversation excerpt below for the assistant that continues it. Keep "
    "facts, decisions, tool results that matter, open questions and the user's requests; "
    "leave out small talk. Answer with the summary only."
)


def check_context_settings(budget: Any, compactor: Any) -> tuple[Any, Any]:
    """``context_budget=``/``context_compactor=`` checked (the agent defaults the compactor).

    A compactor without a budget compacts only after a provider's context-overflow error."""
    if budget is None:
        if compactor is not None and not hasattr(compactor, "spill"):
            raise ConfigurationError(
                "LA-CONFIG",
                f"context_compactor= must be a ContextCompactor, got {type(compactor).__name__}",
                hint="Pass context_compactor=ContextCompactor().",
                details={"parameter": "context_compactor"},
            )
        return None, compactor
    if not all(hasattr(budget, a) for a in ("estimate", "fits", "available")):
        raise ConfigurationError(
            "LA-CONFIG",
            f"context_budget= must be a ContextBudget, got {type(budget).__name__}",
            hint="Pass context_budget=ContextBudget(max_tokens=8192).",
            details={"parameter": "context_budget"},
        )
    if compactor is not None and not hasattr(compactor, "spill"):
        raise ConfigurationError(
            "LA-CONFIG",
            f"context_compactor= must be a ContextCompactor, got {type(compactor).__name__}",
            hint="Pass context_compactor=ContextCompactor(max_inline_tool_chars=...).",
            details={"parameter": "context_compactor"},
        )
    return budget, compactor


def _size(budget: Any, messages: list[dict[str, Any]], tools: Any) -> int:
    size = int(budget.estimate(messages))
    if tools:
        size += int(budget.estimate([{"tools": tools}]))
    return size


def _groups(messages: list[dict[str, Any]], pinned: set[int]) -> list[list[int]]:
    """Droppable groups of indices, oldest first: a tool-call message with its results."""
    groups: list[list[int]] = []
    i = 0
    while i < len(messages):
        if i in pinned:
            i += 1
            continue
        group = [i]
        if messages[i].get("role") == "assistant" and messages[i].get("tool_calls"):
            while i + 1 < len(messages) and messages[i + 1].get("role") == "tool":
                i += 1
                group.append(i)
        elif messages[i].get("role") == "tool":
            i += 1  # a result whose call is pinned or gone: it goes with it, never alone
            groups.append(group)
            continue
        groups.append(group)
        i += 1
    return groups


def _pinned(messages: list[dict[str, Any]], query_message: Any) -> set[int]:
    pinned: set[int] = set()
    i = 0
    while i < len(messages) and messages[i].get("role") == "system":
        pinned.add(i)  # the instructions
        i += 1
    first_user = next((j for j, m in enumerate(messages) if m.get("role") == "user"), None)
    if first_user is not None:
        pinned.add(first_user)  # the first goal
    for j, m in enumerate(messages):
        if m is query_message:
            pinned.add(j)  # this run's question
    if messages:
        last = len(messages) - 1  # the newest step, with its whole tool group
        pinned.add(last)
        while last > 0 and messages[last].get("role") == "tool":
            last -= 1
            pinned.add(last)
    return pinned


def fit_context(
    spec: RunSpec,
    st: Any,
    messages: list[dict[str, Any]],
    tools: Any,
    budget: Any,
    compactor: Any,
    run_budget: RunBudget | None = None,
) -> Generator[Any, Any, None]:
    """Compact ``messages`` in place when the next request would not fit ``budget`` (the
    run's ``ContextBudget``), with ``compactor``; a summary through the run's model is
    checked and settled against ``run_budget`` (the run's ledger, if it has limits)."""
    if budget is None:
        return
    before = _size(budget, messages, tools)
    if before <= budget.available:
        return
    work, spilled = compactor.spill(messages)
    query = st.query_message
    if query is not None:  # spill copies messages: keep pointing at the run's question
        query = next((w for w, m in zip(work, messages, strict=True) if m is query), query)
    pinned = _pinned(work, query)
    groups = _groups(work, pinned)
    dropped: set[int] = set()

    def rest() -> list[dict[str, Any]]:
        return [m for i, m in enumerate(work) if i not in dropped]

    # room for the summary that will stand in for what is dropped (a quarter at most)
    reserve = min(budget.available // 4, 256)
    if _size(budget, work, tools) > budget.available:  # spilling alone may be enough
        while groups and _size(budget, rest(), tools) > budget.available - reserve:
            dropped.update(groups.pop(0))
    removed = [m for i, m in enumerate(work) if i in dropped]
    stage = "trim"
    summary = None
    kept = rest()
    unsummarized = 0
    if removed:
        summary = yield from _summarize(spec, compactor, removed, run_budget)
        note = {"role": "user", "content": SUMMARY_PREFIX + summary}
        at = sum(1 for i in range(min(dropped)) if i not in dropped)
        stage = "summarize"
        while True:  # the summary took more room than reserved: drop more, unsummarized
            kept = rest()
            kept.insert(at, note)
            if not groups or _size(budget, kept, tools) <= budget.available:
                break
            group = groups.pop(0)
            dropped.update(group)
            unsummarized += len(group)
    after = _size(budget, kept, tools)
    if after > budget.available:
        if spec.ctx.active:
            ctx_data = {"stage": "refused", "tokens_before": before, "tokens_after": after}
            spec.ctx.emit("context_compacted", {"scope": "request", **ctx_data})
        raise BudgetExceeded("context_tokens", budget.available, 0, requested=after)
    messages[:] = kept
    if query is not None and query is not st.query_message:
        st.query_message = query
    if spec.ctx.active:
        spec.ctx.emit(
            "context_compacted",
            {
                # "request": this run's working context; the session projector ignores it
                "scope": "request",
                "stage": stage,
                "removed_count": len(removed) + unsummarized,
                "unsummarized_count": unsummarized,
                "kept_count": len(kept),
                "tokens_before": before,
                "tokens_after": after,
                "available": budget.available,
                "summary": summary,
                "spilled": [{k: s[k] for k in ("reference", "sha256", "size")} for s in spilled],
                "request_index": st.model_requests + 1,
            },
        )


def _summarize(
    spec: RunSpec, compactor: Any, removed: list[dict[str, Any]], run_budget: RunBudget | None
) -> Generator[Any, Any, str]:
    summarizer = getattr(compactor, "summarizer", None)
    if summarizer is not None:
        return str(summarizer(list(removed)))
    transcript = "\n".join(_line(m) for m in removed)
    request = ModelRequest(
        messages=[
            {"role": "system", "content": SUMMARY_INSTRUCTIONS},
            {"role": "user", "content": transcript},
        ],
        options=dict(spec.model_options),
    )
    estimate = budget_check_model(spec, run_budget, request)
    response = yield CallModel(request)
    text = (response.content or "").strip() if isinstance(response, ModelResponse) else ""
    if not text:
        raise ModelError("LA-MODEL-OUTPUT", "the model gave no summary for context compaction")
    usage_clamped(spec, response.usage, step="context_summary")
    budget_settle(spec, run_budget, "context_summary", estimate=estimate, usage=response.usage)
    return text


def _line(message: dict[str, Any]) -> str:
    role = message.get("role")
    content = message.get("content")
    if message.get("tool_calls"):
        calls = [
            f"{c.get('function', {}).get('name')}({c.get('function', {}).get('arguments')})"
            for c in message["tool_calls"]
        ]
        content = f"{content or ''} [called {', '.join(calls)}]"
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False, default=str)
    return f"{role}: {content}"
