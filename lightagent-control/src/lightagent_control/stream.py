"""Holding streamed text back until the output guardrails have judged it.

:class:`OutputScreen` sits between the model stream and the consumer. ``feed(delta)``
returns the text that may be shown now: text is released only up to a line or sentence
boundary, only after every output guardrail accepted that prefix unchanged, and only when
all output guardrails are marked ``incremental`` (pattern-local checks such as the
templates' redaction). Anything else — an async guardrail, a custom one, a hook on
``output_guardrail``, or a prefix a guardrail wants to change — holds the rest back until
the final verdict; :meth:`OutputScreen.rest` then gives what is still to be shown.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["OutputScreen"]

# A release point: after a newline, after sentence punctuation followed by a space, or
# after CJK sentence punctuation.
_BOUNDARY = re.compile(r"\n|[.!?;:](?=\s)|[\u3002\uff01\uff1f]")


class OutputScreen:
    """Per-run hold-back of streamed output text (never shared between runs)."""

    def __init__(
        self, guardrails: Any, hook_ctx: Any, *, hold_all: bool, min_chunk: int = 48
    ) -> None:
        self._guardrails = guardrails
        self._ctx = hook_ctx
        self.hold_all = hold_all
        self.min_chunk = min_chunk
        self.buffer = ""
        self.released = 0
        self._checked = 0

    @property
    def held(self) -> str:
        """Text received but not released yet."""
        return self.buffer[self.released :]

    def feed(self, delta: str | None) -> str:
        """Add streamed text; returns the part that may be shown now (often ``""``)."""
        if not delta:
            return ""
        self.buffer += delta
        if self.hold_all:
            return ""
        cut = 0
        for match in _BOUNDARY.finditer(self.buffer, self.released):
            cut = match.end()
        if cut <= self.released or cut - self._checked < self.min_chunk:
            return ""
        candidate = self.buffer[:cut]
        self._checked = cut
        outcome = self._guardrails.run("output", candidate, self._ctx)
        if not outcome.allowed or outcome.changed:
            # Flagged: nothing more is shown until the verdict on the whole answer.
            self.hold_all = True
            return ""
        piece = candidate[self.released :]
        self.released = cut
        return piece

    def rest(self, final_content: str | None) -> str:
        """What is still to be shown once the verdict gave ``final_content`` (after redaction)."""
        if final_content is None:
            return ""
        shown = self.buffer[: self.released]
        if final_content.startswith(shown):
            return final_content[len(shown) :]
        return final_content
