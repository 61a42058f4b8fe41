"""Context compaction: budgets, deterministic trimming, summaries, spilled tool output.

``ContextCompactor`` shrinks a message list without ever separating an assistant
``tool_calls`` message from its results: oversized tool results are replaced by a
``tool-result:sha256:<hex>`` reference (the full text is returned in
``CompactionResult.spilled``), old messages are dropped group by group, and an optional
``summarizer(messages) -> str`` condenses what was dropped. On a session,
:meth:`lightagent.events.manager.SessionManager.compact` records the decision as a
``context.compacted`` event, which later history projections honour.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.events.projector import SUMMARY_PREFIX, trim_messages
from lightagent.utf8 import utf8

__all__ = ["SUMMARY_PREFIX", "CompactionResult", "ContextBudget", "ContextCompactor"]

Summarizer = Callable[[list[dict[str, Any]]], str]


@dataclass
class ContextBudget:
    """A token budget for the prompt, estimated from characters (``chars_per_token``)."""

    max_tokens: int = 8192
    reserved_output_tokens: int = 1024
    chars_per_token: float = 4.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_tokens, int) or self.max_tokens <= 0:
            raise ConfigurationError(
                "LA-CONFIG", f"max_tokens must be a positive int, not {self.max_tokens!r}."
            )
        if (
            not isinstance(self.reserved_output_tokens, int)
            or not 0 <= self.reserved_output_tokens < self.max_tokens
        ):
            raise ConfigurationError(
                "LA-CONFIG", "reserved_output_tokens must be >= 0 and below max_tokens."
            )
        if not isinstance(self.chars_per_token, (int, float)) or self.chars_per_token <= 0:
            raise ConfigurationError("LA-CONFIG", "chars_per_token must be a positive number.")

    @property
    def available(self) -> int:
        """Tokens left for the prompt."""
        return self.max_tokens - self.reserved_output_tokens

    def estimate(self, messages: Sequence[dict[str, Any]]) -> int:
        """Estimated prompt tokens of ``messages``."""
        text = json.dumps(list(messages), ensure_ascii=False, default=str)
        return math.ceil(len(text) / self.chars_per_token)

    def fits(self, messages: Sequence[dict[str, Any]]) -> bool:
        """Whether ``messages`` fit in :attr:`available`."""
        return self.estimate(messages) <= self.available


@dataclass
class CompactionResult:
    """The compacted messages and what was removed, summarized or spilled."""

    messages: list[dict[str, Any]]
    removed_count: int = 0
    summary: str | None = None
    spilled: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list, repr=False)


class ContextCompactor:
    """Deterministic trimming plus optional summarization and tool-output spilling."""

    def __init__(
        self, summarizer: Summarizer | None = None, *, max_inline_tool_chars: int = 12000
    ) -> None:
        if summarizer is not None and not callable(summarizer):
            raise ConfigurationError("LA-CONFIG", "summarizer must be callable(messages) -> str.")
        if not isinstance(max_inline_tool_chars, int) or max_inline_tool_chars < 64:
            raise ConfigurationError("LA-CONFIG", "max_inline_tool_chars must be an int >= 64.")
        self.summarizer = summarizer
        self.max_inline_tool_chars = max_inline_tool_chars

    def spill(
        self, messages: Sequence[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Replace oversized tool results by a sha256 reference and a preview."""
        out: list[dict[str, Any]] = []
        spilled: list[dict[str, Any]] = []
        limit = self.max_inline_tool_chars
        for message in messages:
            content = message.get("content")
            if message.get("role") == "tool" and isinstance(content, str) and len(content) > limit:
                digest = hashlib.sha256(utf8(content)).hexdigest()
                reference = f"tool-result:sha256:{digest}"
                preview = content[: limit // 2]
                out.append(
                    {
                        **message,
                        "content": f"{preview}\n[… {len(content) - len(preview)} more characters "
                        f"stored as {reference}]",
                    }
                )
                spilled.append(
                    {
                        "reference": reference,
                        "sha256": digest,
                        "size": len(content),
                        "content": content,
                    }
                )
            else:
                out.append(message)
        return out, spilled

    def _trim(
        self, messages: Sequence[dict[str, Any]], max_messages: int
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], int]:
        spilled_messages, spilled = self.spill(messages)
        kept = trim_messages(spilled_messages, max_messages)
        head = _system_head(kept)
        removed = spilled_messages[head : len(spilled_messages) - (len(kept) - head)]
        return kept, removed, spilled, head

    def compact(
        self, messages: Sequence[dict[str, Any]], *, max_messages: int = 20
    ) -> CompactionResult:
        """Leading system messages plus the last ``max_messages`` (group-safe), summarized."""
        kept, removed, spilled, head = self._trim(messages, max_messages)
        result = CompactionResult(kept, len(removed), None, spilled, removed)
        if removed and self.summarizer is not None:
            summary = str(self.summarizer(list(removed)))
            result.summary = summary
            kept.insert(head, {"role": "user", "content": SUMMARY_PREFIX + summary})
        return result

    def compact_to_budget(
        self, messages: Sequence[dict[str, Any]], budget: ContextBudget
    ) -> CompactionResult:
        """The largest group-safe tail that fits ``budget`` (the summarizer runs once or twice)."""
        low, high, keep = 0, len(messages) - _system_head(messages), 0
        while low <= high:  # binary search without summaries: they cost a model call each
            mid = (low + high) // 2
            if budget.fits(self._trim(messages, mid)[0]):
                keep, low = mid, mid + 1
            else:
                high = mid - 1
        result = self.compact(messages, max_messages=keep)
        while keep > 0 and not budget.fits(result.messages):
            keep -= 1  # the summary itself took room
            result = self.compact(messages, max_messages=keep)
        return result


def _system_head(messages: Sequence[dict[str, Any]]) -> int:
    head = 0
    while head < len(messages) and messages[head].get("role") == "system":
        head += 1
    return head
