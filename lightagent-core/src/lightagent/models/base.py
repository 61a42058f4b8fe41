"""The model contract: requests, responses, streamed chunks and the ``Model`` protocol.

A model provider turns a :class:`ModelRequest` (OpenAI chat-completions shapes) into a
:class:`ModelResponse`. Streaming yields OpenAI ``chat.completion.chunk`` dicts and ends
with exactly one assembled :class:`ModelResponse`. The loop calls the sync form from
``run`` and the async form from ``arun``; a provider that writes only one of them is
adapted (:mod:`lightagent.models.adapt`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import ModelError

__all__ = [
    "FINISH_REASONS",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "StreamItem",
    "ToolCall",
    "Usage",
]

#: The normalized finish reasons; providers' other spellings are mapped onto these.
FINISH_REASONS = ("stop", "tool_calls", "length", "content_filter", "error")


@dataclass
class ToolCall:
    """One tool call the model asked for; ``arguments`` is the JSON text as normalized."""

    id: str
    name: str
    arguments: str = "{}"
    index: int = 0
    #: Why the raw arguments could not be used (then ``arguments`` is ``"{}"``); the loop
    #: sends this text back to the model as the tool result instead of running the tool.
    error: str | None = None
    #: The arguments exactly as the provider sent them, when they had to be repaired.
    raw_arguments: str | None = None

    def to_message(self) -> dict[str, Any]:
        """The OpenAI ``tool_calls[]`` entry of an assistant message."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    def parsed_arguments(self) -> Any:
        """``arguments`` decoded; raises ``json.JSONDecodeError`` if it is not JSON or is over
        the argument limits (:data:`~lightagent.models.arguments.MAX_ARGUMENT_DEPTH`, ``…CHARS``)."""
        from lightagent.models.arguments import load_arguments

        return load_arguments(self.arguments) if self.arguments else {}


@dataclass
class Usage:
    """Token usage of one or more model calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    #: Of ``completion_tokens``, how many were reasoning (0 when not reported).
    reasoning_tokens: int = 0
    #: Of ``prompt_tokens``, how many came from the provider's prompt cache.
    cached_tokens: int = 0
    #: Counts the provider reported below zero (name -> reported value), read as 0.
    clamped: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        # A negative count would refill a budget: it is read as 0, and kept to be recorded.
        counts = (self.prompt_tokens, self.completion_tokens, self.total_tokens)
        if min(*counts, self.reasoning_tokens, self.cached_tokens) < 0:
            for name in _COUNTS:
                value = getattr(self, name)
                if value < 0:
                    self.clamped[name] = value
                    setattr(self, name, 0)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI ``usage`` shape (details only when reported)."""
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        if self.reasoning_tokens:
            out["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        if self.cached_tokens:
            out["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return out

    @classmethod
    def from_any(cls, value: Any) -> Usage | None:
        """Read an OpenAI usage object or dict (``input_tokens``/``output_tokens`` too)."""
        if value is None:
            return None
        get = value.get if isinstance(value, dict) else lambda k, d=None: getattr(value, k, d)
        prompt = _count("prompt_tokens", get("prompt_tokens") or get("input_tokens"))
        completion = _count("completion_tokens", get("completion_tokens") or get("output_tokens"))
        total = _count("total_tokens", get("total_tokens")) or max(prompt, 0) + max(completion, 0)
        reasoning = _detail(get("completion_tokens_details"), "reasoning_tokens")
        cached = _detail(get("prompt_tokens_details"), "cached_tokens") or get(
            "prompt_cache_hit_tokens"
        )
        return cls(
            prompt,
            completion,
            total,
            _count("reasoning_tokens", reasoning),
            _count("cached_tokens", cached),
        )


_COUNTS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_tokens",
)


#: Above this a count is not a provider's token count (nor exact as a float, as costs are).
_MAX_COUNT = 2**53


def _count(name: str, value: Any) -> int:
    """A reported count as an int (below zero it stays, for ``Usage`` to clamp and record);
    ``LA-MODEL-OUTPUT`` for one that is not a finite number: a budget could not settle it."""
    if value is None:
        return 0
    number = value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if isinstance(number, (int, float)) and -_MAX_COUNT < number < _MAX_COUNT:
        return int(number)
    raise ModelError(
        "LA-MODEL-OUTPUT",
        f"the provider reported {name}={value!r:.40} in its usage, not a number of tokens",
        hint="Check the provider profile; a budget cannot settle a reply without its usage.",
        details={"field": name},
    )


def _detail(details: Any, key: str) -> Any:
    if details is None:
        return 0
    if isinstance(details, dict):
        return details.get(key) or 0
    return getattr(details, key, 0) or 0


@dataclass
class ModelRequest:
    """One chat-completions call: messages, tools and call options in OpenAI shapes."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    stream: bool = False
    #: Further body parameters (temperature, max_tokens, provider extras).
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelResponse:
    """A complete model answer, assembled from a response or from a stream."""

    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = "stop"
    usage: Usage | None = None
    model: str | None = None
    #: Provider quirks that were repaired on the way (e.g. ``"tool_calls_in_text"``).
    repairs: list[str] = field(default_factory=list)
    #: How many HTTP attempts the call took (retries included).
    attempts: int = 1
    #: Wall time of the call in milliseconds, retries and backoff included.
    latency_ms: float = 0.0

    def to_message(self, *, reasoning: bool = False) -> dict[str, Any]:
        """The assistant message to append to the history.

        With ``reasoning=True`` the message keeps ``reasoning_content`` when there is
        one; the model's provider profile later echoes, renames or strips it on send.
        """
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        if reasoning and self.reasoning_content is not None:
            message["reasoning_content"] = self.reasoning_content
        return message


#: What a stream yields: OpenAI chunk dicts, then one final ModelResponse.
StreamItem = dict[str, Any] | ModelResponse


@runtime_checkable
class Model(Protocol):
    """A chat model as the loop uses it. Register one with the ``register_models`` hook.

    A provider must write ``name`` and ``acomplete`` (or ``complete``); ``stream`` and
    ``astream`` are optional: :func:`lightagent.models.adapt.as_model` supplies what is
    missing (``docs/plugins.md``).
    """

    name: str

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer ``request`` in one call."""
        ...

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        """Answer ``request`` in one call, on the event loop."""
        ...

    def stream(self, request: ModelRequest) -> Iterator[StreamItem]:
        """Yield OpenAI chunk dicts, then one final :class:`ModelResponse`."""
        ...

    def astream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Async form of :meth:`stream`."""
        ...
