"""What the model reads of an MCP tool result, and what is kept for the user and the trace.

* Content annotated for the user only (``annotations.audience`` without ``"assistant"``) is
  kept out of the model's text; it stays in the result's metadata (``user_content``).
* ``annotations.priority`` of each block is kept (``priority``: ``[{index, priority}]``).
* With no text for the model, the structured content (as JSON) is the text.
* ``resource_link`` blocks read as their name, URI, MIME type, size and description;
  images and audio as a placeholder naming their type and size (a tool message is text).
* The text is cut at ``max_output_chars`` with :data:`TRUNCATION_MARKER`; the metadata says
  ``truncated: true`` with ``original_chars``. Neither the metadata nor the structured content
  holds a string longer than the limit (such a string becomes ``{omitted_chars, start}``).
"""

from __future__ import annotations

import json
from typing import Any

from lightagent_mcp._sdk import _dump, _field

__all__ = ["DEFAULT_MAX_OUTPUT_CHARS", "TRUNCATION_MARKER", "convert_result"]

#: The default limit of the text the model reads of one result (``max_output_chars``).
DEFAULT_MAX_OUTPUT_CHARS = 100_000
#: Appended to a cut text: ``{shown}`` and ``{total}`` characters, the server's ``{limit}``.
TRUNCATION_MARKER = (
    "\n[LA-MCP-TRUNCATED: showed {shown} of {total} characters; "
    "the server's output limit is max_output_chars={limit}]"
)


def _size(block: dict[str, Any]) -> str:
    data = block.get("data") or block.get("blob")
    size = len(data) * 3 // 4 if isinstance(data, str) else block.get("size")
    return f", {size} bytes" if isinstance(size, int) else ""


def block_text(block: dict[str, Any]) -> str:
    """The text the model reads for one content block (a dict, as the protocol sends it)."""
    kind = block.get("type")
    mime = block.get("mimeType") or "application/octet-stream"
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {mime}{_size(block)}, not shown to the model]"
    if kind == "resource_link":
        name = block.get("title") or block.get("name") or ""
        text = f"[resource link: {name} <{block.get('uri')}> ({mime}{_size(block)})]"
        description = block.get("description")
        return f"{text} {description}" if description else text
    if kind == "resource":
        resource = block.get("resource") or {}
        if isinstance(resource.get("text"), str):
            return str(resource["text"])
        kind_mime = resource.get("mimeType") or "application/octet-stream"
        return f"[resource: {resource.get('uri')} ({kind_mime}{_size(resource)})]"
    return json.dumps(block, ensure_ascii=False, default=str)


def _for_user_only(block: dict[str, Any]) -> bool:
    audience = (block.get("annotations") or {}).get("audience")
    return isinstance(audience, list) and bool(audience) and "assistant" not in audience


def _bounded(value: Any, limit: int) -> Any:
    """``value`` with every string longer than ``limit`` replaced by a note of its length."""
    if isinstance(value, str) and len(value) > limit:
        return {"omitted_chars": len(value), "start": value[: min(limit, 200)]}
    if isinstance(value, dict):
        return {k: _bounded(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_bounded(v, limit) for v in value]
    return value


def convert_result(result: Any, max_output_chars: int) -> tuple[str, Any, bool, dict[str, Any]]:
    """``(text for the model, structured content, is_error, metadata)`` of a ``tools/call`` result."""
    blocks = [_dump(b) for b in _field(result, "content") or ()]
    blocks = [b for b in blocks if isinstance(b, dict)]
    structured = _field(result, "structured_content", "structuredContent")
    is_error = bool(_field(result, "is_error", "isError"))
    texts: list[str] = []
    user_only: list[int] = []
    priority: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        level = (block.get("annotations") or {}).get("priority")
        if isinstance(level, (int, float)):
            priority.append({"index": index, "priority": level})
        if _for_user_only(block):
            user_only.append(index)
        else:
            texts.append(block_text(block))
    text = "\n".join(texts)
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, default=str)
    elif not text and user_only:
        text = f"[{len(user_only)} content block(s) shown to the user only]"
    metadata: dict[str, Any] = {"content": _bounded(blocks, max_output_chars)}
    if user_only:
        metadata["user_content"] = user_only
    if priority:
        metadata["priority"] = priority
    if len(text) > max_output_chars:
        metadata.update(truncated=True, original_chars=len(text))
        marker = TRUNCATION_MARKER.format(
            shown=max_output_chars, total=len(text), limit=max_output_chars
        )
        text = text[:max_output_chars] + marker
    return text, _bounded(structured, max_output_chars), is_error, metadata
