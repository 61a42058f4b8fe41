"""What the model reads of an MCP tool result, and what is kept for the user and the trace.

* Content annotated for the user only (``annotations.audience`` without ``"assistant"``) is
  kept out of the model's text; it stays in the result's metadata (``user_content``).
* ``annotations.priority`` of each block is kept (``priority``: ``[{index, priority}]``).
* With no text for the model, the structured content (as JSON) is the text.
* ``resource_link`` blocks read as their name, URI, MIME type, size and description;
  images and audio as a placeholder naming their type and size (a tool message is text).
  With ``media`` (the server's ``"media": ["image", "audio"]``) an image in a format chat
  models read (PNG, JPEG, GIF, WebP) or WAV/MP3 audio is also handed to the model as an
  OpenAI content part (``metadata["model_parts"]``): the loop sends those in one user
  message after the round's tool messages, and keeps them out of events.
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


#: Image types chat models read as ``image_url`` parts.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: Audio types chat models read as ``input_audio`` parts (MIME type -> format).
AUDIO_TYPES = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
#: The most base64 characters of one block handed to the model (about 15 MB of data).
MEDIA_CHARS = 20_000_000


def model_part(block: dict[str, Any], media: tuple[str, ...]) -> dict[str, Any] | None:
    """The OpenAI content part for an image or audio block, if ``media`` lets it through."""
    kind, mime, data = block.get("type"), block.get("mimeType"), block.get("data")
    if kind not in media or not isinstance(data, str) or len(data) > MEDIA_CHARS:
        return None
    if kind == "image" and mime in IMAGE_TYPES:
        return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
    if kind == "audio" and mime in AUDIO_TYPES:
        return {"type": "input_audio", "input_audio": {"data": data, "format": AUDIO_TYPES[mime]}}
    return None


def block_text(block: dict[str, Any], shown: bool = False) -> str:
    """The text the model reads for one content block (a dict, as the protocol sends it);
    ``shown``: the block also reaches the model as a content part."""
    kind = block.get("type")
    mime = block.get("mimeType") or "application/octet-stream"
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        how = "attached for the model" if shown else "not shown to the model"
        return f"[{kind}: {mime}{_size(block)}, {how}]"
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


def convert_result(
    result: Any, max_output_chars: int, media: tuple[str, ...] = ()
) -> tuple[str, Any, bool, dict[str, Any]]:
    """``(text for the model, structured content, is_error, metadata)`` of a ``tools/call`` result;
    ``media`` names the block kinds (``"image"``, ``"audio"``) the model is shown."""
    blocks = [_dump(b) for b in _field(result, "content") or ()]
    blocks = [b for b in blocks if isinstance(b, dict)]
    structured = _field(result, "structured_content", "structuredContent")
    is_error = bool(_field(result, "is_error", "isError"))
    texts: list[str] = []
    user_only: list[int] = []
    priority: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        level = (block.get("annotations") or {}).get("priority")
        if isinstance(level, (int, float)):
            priority.append({"index": index, "priority": level})
        if _for_user_only(block):
            user_only.append(index)
        else:
            part = model_part(block, media) if media else None
            if part is not None:
                parts.append(part)
            texts.append(block_text(block, part is not None))
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
    if parts:
        metadata["model_parts"] = parts
    if len(text) > max_output_chars:
        metadata.update(truncated=True, original_chars=len(text))
        marker = TRUNCATION_MARKER.format(
            shown=max_output_chars, total=len(text), limit=max_output_chars
        )
        text = text[:max_output_chars] + marker
    return text, _bounded(structured, max_output_chars), is_error, metadata
