"""Turn provider responses and streamed chunks into one normalized :class:`ModelResponse`.

:func:`parse_completion` reads a non-streamed ``chat.completion`` dict.
:class:`StreamAssembler` reads ``chat.completion.chunk`` dicts one at a time, returns
them normalized to the OpenAI shape (dense tool-call indexes from 0, an id on each
call's first fragment, ``reasoning`` renamed ``reasoning_content``, ``finish_reason``
from one vocabulary and sent once) and assembles the final response. Both follow the
parsed tool calls, not the finish label, and raise :class:`ModelError` for in-band
errors; a stream that ends without a finish raises ``LA-TRUNCATED``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection
from typing import Any

from lightagent.errors import ModelError
from lightagent.models.arguments import normalize_arguments
from lightagent.models.base import ModelResponse, ToolCall, Usage
from lightagent.models.profiles import ProviderProfile
from lightagent.models.retry import status_to_code
from lightagent.models.text_tools import (
    MARKUP_PREFIXES,
    extract_text_tool_calls,
    strip_leaked_markup,
)

__all__ = [
    "StreamAssembler",
    "inband_error",
    "new_call_id",
    "normalize_finish_reason",
    "parse_completion",
    "tool_names",
]

_FINISH = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "eos": "stop",
    "end": "stop",
    "complete": "stop",
    "tool_calls": "tool_calls",
    "tool_call": "tool_calls",
    "tool_use": "tool_calls",
    "function_call": "tool_calls",
    "tools": "tool_calls",
    "length": "length",
    "max_tokens": "length",
    "model_length": "length",
    "content_filter": "content_filter",
    "safety": "content_filter",
    "error": "error",
}


def normalize_finish_reason(raw: Any) -> str | None:
    """Map a provider's finish label onto :data:`FINISH_REASONS`; ``""``/``None`` mean "not yet"."""
    if not raw:
        return None
    return _FINISH.get(str(raw).lower(), "stop")


def new_call_id() -> str:
    """A fresh tool-call id for calls the provider sent without one."""
    return f"call_{uuid.uuid4().hex[:24]}"


def tool_names(tools: list[dict[str, Any]] | None) -> frozenset[str]:
    """The function names offered in an OpenAI ``tools`` list."""
    if not tools:
        return frozenset()
    names = set()
    for spec in tools:
        fn = spec.get("function") if isinstance(spec, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            names.add(fn["name"])
    return frozenset(names)


def inband_error(payload: dict[str, Any], **details: Any) -> ModelError:
    """A :class:`ModelError` for an ``{"error": {...}}`` object sent with HTTP 200."""
    error = payload.get("error")
    if not isinstance(error, dict):
        error = {"message": str(error)}
    status = error.get("status_code")
    code = error.get("code")
    if not isinstance(status, int):
        status = code if isinstance(code, int) else None
    la_code = status_to_code(status) if isinstance(status, int) and status >= 400 else "LA-PROVIDER"
    info: dict[str, Any] = {
        "status_code": status,
        "provider_error": error.get("message"),
        "in_band": True,
    }
    if code is not None and not isinstance(code, int):
        info["provider_code"] = code
    if error.get("failed_generation") is not None:
        info["failed_generation"] = error["failed_generation"]
        info["retry_by_reprompt"] = True
    metadata = error.get("metadata")
    if isinstance(metadata, dict) and metadata.get("raw"):
        info["provider_error"] = f"{error.get('message')}: {metadata['raw']}"
    info.update(details)
    message = f"the provider reported an error mid-response: {info['provider_error']}"
    return ModelError(la_code, message, details=info)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict)) or None
    return str(content)


def _settle(
    content: str | None,
    reasoning: str | None,
    calls: list[ToolCall],
    finish: str | None,
    usage: Any,
    model: str | None,
    repairs: list[str],
    profile: ProviderProfile,
    names: Collection[str],
) -> ModelResponse:
    if finish == "error":
        raise ModelError(
            "LA-PROVIDER",
            "the provider ended the answer with finish_reason=error",
            details={"partial_content": content, "partial_reasoning": reasoning},
        )
    if calls:
        if content and (
            "<tool_call" in content or "<function=" in content or "<|tool_call" in content
        ):
            content = strip_leaked_markup(content)
            repairs.append("leaked_tool_markup")
    elif content and names and profile.text_tool_calls:
        found = extract_text_tool_calls(content, names)
        if found is not None:
            content, text_calls = found
            for name, raw in text_calls:
                args, err = normalize_arguments(raw)
                calls.append(
                    ToolCall(
                        new_call_id(),
                        name,
                        args,
                        len(calls),
                        err,
                        None if err is None else str(raw),
                    )
                )
            repairs.append("tool_calls_in_text")
    if calls:
        if finish != "length":
            if finish != "tool_calls":
                repairs.append(f"finish_reason:{finish}")
            finish = "tool_calls"
    elif finish == "tool_calls":
        repairs.append("finish_reason:tool_calls_without_calls")
        finish = "stop"
    return ModelResponse(
        content=content or None,
        reasoning_content=reasoning,
        tool_calls=calls,
        finish_reason=finish,
        usage=Usage.from_any(usage),
        model=model,
        repairs=repairs,
    )


def _call(position: int, spec: dict[str, Any], repairs: list[str]) -> ToolCall:
    fn = spec.get("function") or {}
    raw = fn.get("arguments")
    args, err = normalize_arguments(raw)
    call_id = spec.get("id")
    if not call_id:
        call_id = new_call_id()
        repairs.append("synthesized_call_id")
    raw_text = None
    if err is not None or (raw is not None and args is not raw):
        raw_text = raw if isinstance(raw, str) else json.dumps(raw)
    return ToolCall(call_id, fn.get("name") or "", args, position, err, raw_text)


def parse_completion(
    data: dict[str, Any], profile: ProviderProfile, names: Collection[str] = ()
) -> ModelResponse:
    """Read a non-streamed ``chat.completion`` dict (or raise for an in-band error)."""
    if not isinstance(data, dict):
        raise ModelError(
            "LA-MODEL-OUTPUT",
            "the model endpoint answered with something that is not a JSON object",
            details={"response": str(data)[:500]},
        )
    if data.get("error"):
        raise inband_error(data)
    choices = data.get("choices")
    if not choices:
        raise ModelError(
            "LA-MODEL-OUTPUT",
            "the provider answered without choices",
            details={"response": str(data)[:500]},
        )
    choice = choices[0]
    message = choice.get("message") or {}
    repairs: list[str] = []
    calls = [_call(i, spec, repairs) for i, spec in enumerate(message.get("tool_calls") or ())]
    legacy = message.get("function_call")
    if not calls and isinstance(legacy, dict):
        calls.append(_call(0, {"function": legacy}, repairs))
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")
    return _settle(
        _text(message.get("content")),
        reasoning,
        calls,
        normalize_finish_reason(choice.get("finish_reason")) or "stop",
        data.get("usage"),
        data.get("model"),
        repairs,
        profile,
        names,
    )


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

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """Take one provider chunk; return the normalized chunk(s) to yield."""
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
                text = _text(text) or ""
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
            return isinstance(json.loads("".join(slot.parts)), dict)
        except ValueError:
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
        return _settle(
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
