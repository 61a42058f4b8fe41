"""Recovery from a provider's context-overflow error: compact once, then ask again.

A provider that finds a request longer than its context window answers with an error
(OpenAI ``context_length_exceeded``, Anthropic "prompt is too long", vLLM and llama.cpp
"maximum context length", Ollama and Gemini "exceeds the context window" …). The runtime's
step sees that error at the loop's ``request_failed`` moment, compacts the run's messages
with the existing compaction (:func:`~lightagent_runtime.context_steps.fit_context`, to
half their estimated size: spill large tool results, drop and summarize the oldest turns,
keep the instructions, the first goal and the question) and has the loop send the request
again, once per run. A ``context_overflow`` event records it. The second overflow is
``LA-CONTEXT-OVERFLOW``; a conversation that cannot be made that small is ``LA-BUDGET``
(``context_tokens``), as the compaction says.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.errors import LightAgentError, ModelError

__all__ = ["OVERFLOW_MARKERS", "is_context_overflow", "recover_overflow"]

#: Phrases of the providers' overflow errors (lower case), in code or message.
OVERFLOW_MARKERS: tuple[str, ...] = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "context_window",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "reduce the length of the messages",
    "exceeds the maximum number of tokens",
)


def is_context_overflow(error: Any) -> bool:
    """Whether a failed request's error says the request did not fit the model's window."""
    if not isinstance(error, LightAgentError) or error.code not in ("LA-400", "LA-413"):
        return False
    text = f"{error.message} {error.details}".lower()
    return any(marker in text for marker in OVERFLOW_MARKERS)


def recover_overflow(
    spec: Any,
    st: Any,
    error: Any,
    messages: list[dict[str, Any]],
    state: dict[str, Any],
    settings: tuple[Any, Any, Any],
) -> Generator[Any, Any, bool]:
    """Compact ``messages`` after an overflow and ask for the retry (True), once per run
    (``state`` is the run's); anything else is left to the loop (False). ``settings`` are
    the run's context budget, compactor and ledger (each may be None)."""
    if not is_context_overflow(error):
        return False
    if state.get("overflow_retried"):
        raise ModelError(
            "LA-CONTEXT-OVERFLOW",
            "the request is still longer than the model's context window after compacting it",
            details={"provider_error": error.to_dict()},
        ) from error
    state["overflow_retried"] = True
    from lightagent_runtime.compaction import ContextBudget, ContextCompactor
    from lightagent_runtime.context_steps import fit_context

    context_budget, compactor, run_budget = settings
    per_token = getattr(context_budget, "chars_per_token", 4.0)
    size = ContextBudget(chars_per_token=per_token).estimate(messages)
    target = ContextBudget(
        max_tokens=max(size // 2, 2), reserved_output_tokens=1, chars_per_token=per_token
    )
    if spec.ctx.active:
        spec.ctx.emit(
            "context_overflow",
            {
                "code": error.code,
                "tokens_before": size,
                "target_tokens": target.available,
                "request_index": st.model_requests,
            },
        )
    yield from fit_context(
        spec, st, messages, None, target, compactor or ContextCompactor(), run_budget
    )
    return True
