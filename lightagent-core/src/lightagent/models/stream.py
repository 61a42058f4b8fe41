"""Normalize streamed ``chat.completion.chunk`` dicts and assemble the final response.

:class:`StreamAssembler` reads chunks one at a time and returns them normalized to the
OpenAI shape (dense tool-call indexes from 0, an id on each call's first fragment,
``reasoning`` renamed ``reasoning_content``, ``finish_reason`` from one vocabulary and
sent once), holding back text where tool markup may begin. In-band errors raise
:class:`ModelError`; a stream that ends without a finish raises ``LA-TRUNCATED``.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from lightagent.errors import ModelError
from lightagent.models.arguments import load_arguments, normalize_arguments
from lightagent.models.base import ModelResponse, ToolCall, Usage
from lightagent.models.clients import plain
from lightagent.models.parse import (
    inband_error,
    new_call_id,
    normalize_finish_reason,
    settle,
    text_content,
)
from lightagent.models.profiles import ProviderProfile
from lightagent.models.text_tools import MARKUP_PREFIXES

__all__ = ["StreamAssembler"]


def _starts_object(args: Any) -> bool:
    return isinstance(args, dict) or (isinstance(args, str) and args.lstrip().startswith("{"))


class _Slot:
    __slots__ = ("id", "name", "parts", "position", "raw_id")

    def __init__(self, position: int, raw_id: str | None) -> None:
        self.position = position
        self.raw_id = raw_id
        self.id = raw_id or new_call_id()
        self.name = ""
        self.parts: list[str] = []


class _TextGate:
    """Holds streamed content back from where tool markup may begin, until the finish."""

    def __init__(self, names: Collection[str]) -> None:
        self.prefixes = MARKUP_PREFIXES + tuple(f"<{n}" for n in names)
        self.pending = ""
        self.holding = False
        self.started = False
        self.emitted: list[str] = []

    def _verdict(self, text: str) -> str:
        if not self.started and text[0] in "{[<":  # a reply that opens with markup or JSON
            return "hold"
        for prefix in self.prefixes:
            if text.startswith(prefix):
                return "hold"
            if prefix.startswith(text):
                return "wait"
        return "release"

    def push(self, text: str) -> str:
        if self.holding:
            self.pending += text
            return ""
        rest, self.pending = self.pending + text, ""
        out: list[str] = []
        while rest:
            cut = min((i for i in (rest.find("<"), rest.find("`")) if i != -1), default=-1)
            if not self.started and not "".join(out).strip():
                lead = len(rest) - len(rest.lstrip())
                if rest[lead : lead + 1] in ("{", "["):
                    cut = lead if cut == -1 else min(cut, lead)
            if cut == -1:
                out.append(rest)
                break
            out.append(rest[:cut])
            rest = rest[cut:]
            verdict = self._verdict(rest)
            if verdict != "release":
                self.holding = verdict == "hold"
                self.pending = rest
                break
            out.append(rest[0])
            rest = rest[1:]
        emitted = "".join(out)
        if emitted:
            self.emitted.append(emitted)
            if emitted.strip():
                self.started = True
        return emitted


class StreamAssembler:
    """Normalize streamed chunks one by one and assemble the final :class:`ModelResponse`.

    ``feed(chunk)`` returns the chunks to pass on (usually the one given, normalized in
    place); ``close()`` returns the final response, or raises ``LA-TRUNCATED`` when no
    finish arrived.
    """

    def __init__(self, profile: ProviderProfile, names: Collection[str] = ()) -> None:
        self.profile = profile
        self.names = names
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.slots: list[_Slot] = []
        self._by_index: dict[Any, _Slot] = {}
        self._by_id: dict[str, _Slot] = {}
        self.usage: Any = None
        self.model: str | None = None
        self.finish: str | None = None
        self.repairs: list[str] = []
        self.chunks = 0
        self.response: ModelResponse | None = None
        self._gate = _TextGate(names) if names and profile.text_tool_calls else None

    def feed(self, chunk: Any) -> list[dict[str, Any]]:
        """Take one provider chunk (a dict or an SDK object); return the normalized chunk(s)."""
        if not isinstance(chunk, dict):
            chunk = plain(chunk)
        self.chunks += 1
        if chunk.get("error"):
            raise inband_error(chunk, **self._partial())
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        if self.model is None:
            self.model = chunk.get("model")
        choices = chunk.get("choices")
        if not choices:
            return [chunk]
        choice = choices[0]
        delta = choice.get("delta")
        if delta is None:
            delta = choice["delta"] = {}
        if "reasoning" in delta or "reasoning_details" in delta:
            value = delta.pop("reasoning", None)
            delta.pop("reasoning_details", None)
            if delta.get("reasoning_content") is None and value is not None:
                delta["reasoning_content"] = value
        reasoning = delta.get("reasoning_content")
        if reasoning:
            self.reasoning.append(reasoning)
        text = delta.get("content")
        if text:
            if not isinstance(text, str):
                text = text_content(text) or ""
            self.content.append(text)
            if self._gate is not None:
                delta["content"] = self._gate.push(text)
        fragments = delta.get("tool_calls")
        if fragments:
            delta["tool_calls"] = [self._fragment(f) for f in fragments]
        raw = choice.get("finish_reason")
        finish = normalize_finish_reason(raw)
        if finish is None:
            if raw is not None:
                choice["finish_reason"] = None
            return [chunk]
        if self.response is not None:
            choice["finish_reason"] = None  # a duplicate finish must not end the message twice
            self.repairs.append("duplicate_finish")
            return [chunk]
        emitted = "".join(self._gate.emitted) if self._gate is not None else None
        calls_before = len(self.slots)
        self.response = self._assemble(finish)
        extra = self._extra_chunks(chunk, emitted, calls_before)
        if not extra:
            choice["finish_reason"] = self.response.finish_reason
            return [chunk]
        choice["finish_reason"] = None
        final = {k: v for k, v in chunk.items() if k not in ("choices", "usage")}
        final["choices"] = [{"index": 0, "delta": {}, "finish_reason": self.response.finish_reason}]
        if "usage" in chunk:
            final["usage"] = chunk.pop("usage")
        return [chunk, *extra, final]

    def close(self) -> ModelResponse:
        """The assembled response; raises ``LA-TRUNCATED`` when no finish was seen."""
        if self.response is None:
            raise self.truncated()
        if self.usage is not None:
            # Usage may follow the finish chunk (a trailing choices:[] chunk); the last one wins.
            self.response.usage = Usage.from_any(self.usage)
        return self.response

    def truncated(self, cause: BaseException | None = None) -> ModelError:
        """The ``LA-TRUNCATED`` error for a stream that stopped before its finish."""
        details = self._partial()
        if cause is not None:
            details["cause"] = f"{type(cause).__name__}: {cause}"
        return ModelError(
            "LA-TRUNCATED",
            f"the model stream ended without a finish after {self.chunks} chunks",
            details=details,
        )

    def _partial(self) -> dict[str, Any]:
        return {
            "partial_content": "".join(self.content) or None,
            "partial_reasoning": "".join(self.reasoning) or None,
            "chunks": self.chunks,
        }

    def _fragment(self, frag: dict[str, Any]) -> dict[str, Any]:
        index = frag.get("index")
        raw_id = frag.get("id") or None
        fn = frag.get("function") or {}
        name = fn.get("name")
        slot: _Slot | None = None
        if index is not None:
            slot = self._by_index.get(index)
            if slot is not None and raw_id and slot.raw_id and raw_id != slot.raw_id:
                slot = None  # same index, different id: a new call (ids take priority)
        elif raw_id:
            slot = self._by_id.get(raw_id)
        elif self.slots:
            slot = self.slots[-1]
        if (
            slot is not None
            and name
            and slot.name
            and not raw_id
            and _starts_object(fn.get("arguments"))
            and self._complete(slot)
        ):
            slot = None  # a whole second call reusing the index (or sent without one)
        first = slot is None
        if slot is None:
            slot = _Slot(len(self.slots), raw_id)
            self.slots.append(slot)
            if raw_id is None:
                self.repairs.append("synthesized_call_id")
        out_id = first
        if raw_id:
            self._by_id[raw_id] = slot
            if slot.raw_id is None:
                slot.raw_id = slot.id = raw_id  # the real id came after the first fragment
                out_id = True
        if index is not None:
            self._by_index[index] = slot
        if name and not slot.name:
            slot.name = name
        args = fn.get("arguments")
        if isinstance(args, dict):
            args = json.dumps(args)
            slot.parts = [args]
        elif isinstance(args, str) and args:
            slot.parts.append(args)
        out: dict[str, Any] = {"index": slot.position}
        if out_id:
            out["id"] = slot.id
            out["type"] = "function"
        function: dict[str, Any] = {"arguments": args if isinstance(args, str) else ""}
        if first:
            function["name"] = slot.name
        out["function"] = function
        return out

    @staticmethod
    def _complete(slot: _Slot) -> bool:
        try:
            return isinstance(load_arguments("".join(slot.parts)), dict)
        except ValueError:  # not (yet) JSON, or over the argument limits
            return False

    def _assemble(self, finish: str) -> ModelResponse:
        repairs = self.repairs
        calls = []
        for slot in self.slots:
            raw = "".join(slot.parts)
            args, err = normalize_arguments(raw)
            changed = err is not None or args is not raw
            calls.append(
                ToolCall(slot.id, slot.name, args, slot.position, err, raw if changed else None)
            )
        content = "".join(self.content) if self.content else None
        return settle(
            content,
            "".join(self.reasoning) if self.reasoning else None,
            calls,
            finish,
            self.usage,
            self.model,
            repairs,
            self.profile,
            self.names,
        )

    def _extra_chunks(
        self, chunk: dict[str, Any], emitted: str | None, calls_before: int
    ) -> list[dict[str, Any]]:
        response = self.response
        assert response is not None
        deltas: list[dict[str, Any]] = []
        if emitted is not None:
            visible = response.content or ""
            rest = visible[len(emitted) :] if visible.startswith(emitted) else ""
            if rest:
                deltas.append({"content": rest})
        for call in response.tool_calls[calls_before:]:
            deltas.append(
                {
                    "tool_calls": [
                        {
                            "index": call.index,
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        }
                    ]
                }
            )
        base = {k: v for k, v in chunk.items() if k not in ("choices", "usage")}
        return [
            {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
        ]
