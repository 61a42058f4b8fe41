"""Read provider answers into :class:`ModelResponse`: finish labels, in-band errors, calls.

:func:`parse_completion` reads a non-streamed ``chat.completion`` dict; :func:`settle`
applies the rules both paths share: follow the parsed tool calls, not the finish label;
recover tool calls written as text; strip tool markup leaked into content.
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
from lightagent.models.retry import inband_error
from lightagent.models.text_tools import extract_text_tool_calls, strip_leaked_markup

__all__ = [
    "inband_error",
    "new_call_id",
    "normalize_finish_reason",
    "parse_completion",
    "settle",
    "text_content",
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


def text_content(content: Any) -> str | None:
    """``content`` as text (content-part lists joined)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict)) or None
    return str(content)


def settle(
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
    """Build the response both paths share: follow parsed calls, recover text calls, strip leaks."""
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
    specs = message.get("tool_calls")
    calls = [_call(i, spec, repairs) for i, spec in enumerate(specs)] if specs else []
    legacy = message.get("function_call")
    if not calls and isinstance(legacy, dict):
        calls.append(_call(0, {"function": legacy}, repairs))
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")
    content = message.get("content")
    finish = choice.get("finish_reason")
    return settle(
        content if content is None or type(content) is str else text_content(content),
        reasoning,
        calls,
        (type(finish) is str and _FINISH.get(finish)) or normalize_finish_reason(finish) or "stop",
        data.get("usage"),
        data.get("model"),
        repairs,
        profile,
        names,
    )
