"""Recover tool calls that a model wrote into ``content`` instead of ``tool_calls``.

Forms recognised (only for names of tools the request offered):

* Hermes / Qwen ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks
  (also Qwen3-Coder ``<tool_call><function=name><parameter=k>v</parameter>...``);
* a self-closing tag named after a tool: ``<run_command command="ls -l" />``;
* a reply that is only one markdown fence or only XML, holding an element named after
  a tool (``<run_command><command>ls -l</command></run_command>``);
* a reply that is only a JSON object (or list) with ``name`` and ``arguments``.

Blocks inside a markdown fence among other text are examples, not calls: left alone.
"""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from collections.abc import Collection
from typing import Any

from lightagent.models.arguments import ArgumentLimitError, load_arguments

__all__ = ["MARKUP_PREFIXES", "TextToolCall", "extract_text_tool_calls", "strip_leaked_markup"]

#: Where tool markup can start in streamed content (used to hold text back).
MARKUP_PREFIXES = ("<tool_call", "<function=", "```", "<|tool_call")

TextToolCall = tuple[str, Any]  # (name, raw arguments)

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_QWEN_FUNCTION = re.compile(r"<function=([\w.\-]+)>(.*?)(?:</function>|\Z)", re.S)
_QWEN_PARAM = re.compile(
    r"<parameter=([\w.\-]+)>\s*(.*?)\s*(?:</parameter>|(?=<parameter=)|\Z)", re.S
)
_SELF_CLOSING = re.compile(r"<([\w.\-]+)((?:\s+[\w.\-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*/>")
_ATTR = re.compile(r"([\w.\-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_NAME = re.compile(r"[\"']name[\"']\s*:\s*[\"']([\w.\-]+)[\"']")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
#: First characters of a reply that may be a whole call (a fence, JSON, XML); "" is
#: in every string, so an empty reply leaves too.
_OPENERS = "`{[<"


def _from_json(text: str, names: Collection[str]) -> list[TextToolCall] | None:
    try:
        value = load_arguments(text)
    except ArgumentLimitError:
        return _named(text, names)  # over the limits: normalizing it tells the model so
    except ValueError:
        return _from_broken_json(text, names)
    items = value if isinstance(value, list) else [value]
    calls: list[TextToolCall] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        if isinstance(item.get("function"), dict):
            item = item["function"]
        name = item.get("name")
        if name not in names:
            return None
        calls.append((name, item.get("arguments", item.get("parameters"))))
    return calls or None


def _from_broken_json(text: str, names: Collection[str]) -> list[TextToolCall] | None:
    """A call to an offered tool whose JSON is broken: keep it, so the model hears why."""
    if text.startswith("{"):
        try:
            value = ast.literal_eval(text)  # single-quoted reprs; evaluates no code
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            value = None
        if isinstance(value, dict) and value.get("name") in names:
            return [(value["name"], value.get("arguments", value.get("parameters")))]
    return _named(text, names)


def _named(text: str, names: Collection[str]) -> list[TextToolCall] | None:
    match = _NAME.search(text)
    if match is None or match.group(1) not in names:
        return None
    # The raw text is not usable JSON: normalizing it yields the error text for the model.
    return [(match.group(1), text)]


def _param_value(text: str) -> Any:
    try:
        return load_arguments(text)
    except ValueError:  # not JSON, or over the argument limits: the text itself
        return text


def _from_qwen_xml(text: str, names: Collection[str]) -> list[TextToolCall] | None:
    calls = []
    for match in _QWEN_FUNCTION.finditer(text):
        if match.group(1) not in names:
            return None
        args = {k: _param_value(v) for k, v in _QWEN_PARAM.findall(match.group(2))}
        calls.append((match.group(1), args))
    return calls or None


def _from_xml(text: str, names: Collection[str]) -> list[TextToolCall] | None:
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None
    for element in root.iter():
        if element.tag in names:
            args: dict[str, Any] = dict(element.attrib)
            for child in element:
                args[child.tag] = (child.text or "").strip()
            return [(element.tag, args)]
    return None


def _fenced_spans(content: str) -> list[tuple[int, int]]:
    return [m.span() for m in _FENCE.finditer(content)] if "```" in content else []


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= pos < end for start, end in spans)


def _whole_reply(text: str, names: Collection[str]) -> list[TextToolCall] | None:
    if text.startswith("```"):
        body = text[3:-3] if text.endswith("```") and len(text) > 6 else text[3:]
        first, _, rest = body.partition("\n")
        if first.strip().isalpha() or not first.strip():
            body = rest
        body = body.strip()
        if "\n" in body and body.split("\n", 1)[0].strip().isalpha():
            body = body.split("\n", 1)[1].strip()  # a language tag on its own line
        text = body
    if text.startswith(("{", "[")):
        return _from_json(text, names)
    if text.startswith("<") and "<tool_call" not in text:
        return _from_xml(text, names)
    return None


def extract_text_tool_calls(
    content: str, names: Collection[str]
) -> tuple[str | None, list[TextToolCall]] | None:
    """Find tool calls written as text; return ``(remaining_content, calls)`` or None.

    ``names`` are the tool names the request offered; nothing else counts as a call.
    """
    if not names or not content:
        return None
    stripped = content.strip()
    # Every form starts the reply with one of these or holds one of these tags; most
    # answers are plain prose and leave here.
    if stripped[:1] not in _OPENERS and "<tool_call" not in content and "/>" not in content:
        return None
    whole = _whole_reply(stripped, names)
    if whole:
        return None, whole
    spans = _fenced_spans(content)
    calls: list[TextToolCall] = []
    cuts: list[tuple[int, int]] = []
    if "<tool_call" in content:
        for match in _TOOL_CALL.finditer(content):
            if _inside(match.start(), spans):
                continue
            body = match.group(1).strip()
            found = _from_json(body, names) if body.startswith("{") else _from_qwen_xml(body, names)
            if not found:
                return None  # a malformed or unknown call: leave the text for the model to see
            calls.extend(found)
            cuts.append(match.span())
    elif "/>" in content:
        for match in _SELF_CLOSING.finditer(content):
            if match.group(1) not in names or _inside(match.start(), spans):
                continue
            args = {k: a if a or not b else b for k, a, b in _ATTR.findall(match.group(2))}
            calls.append((match.group(1), args))
            cuts.append(match.span())
    if not calls:
        return None
    pieces, last = [], 0
    for start, end in cuts:
        pieces.append(content[last:start])
        last = end
    pieces.append(content[last:])
    remaining = "".join(pieces).strip()
    return (remaining or None), calls


def strip_leaked_markup(content: str | None) -> str | None:
    """Cut tool markup a server leaked into ``content`` before its structured calls."""
    if not content:
        return content
    cut = len(content)
    for marker in ("<tool_call", "<function=", "<|tool_call"):
        index = content.find(marker)
        if index != -1:
            cut = min(cut, index)
    if cut == len(content):
        return content
    return content[:cut].rstrip() or None
