"""Stream chunks that read like the OpenAI SDK's ``ChatCompletionChunk`` and are dicts.

The seeds promised "OpenAI-compatible streaming chunks ... backward compatible with existing
integrations": consumers write ``chunk.choices[0].delta.content`` (the SDK's objects) or
``chunk["choices"][0]["delta"]["content"]`` (the dicts this project streams). A
:class:`Chunk` is a ``dict`` subclass, so the second form, ``json.dumps`` and ``==`` against a
dict all keep working, and attribute access wraps nested dicts and lists only when it is
used — building a chunk costs one shallow copy, and nothing more unless you read attributes.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["Chunk", "as_chunk"]


class Chunk(dict[str, Any]):
    """A ``chat.completion.chunk`` dict whose keys also read as attributes.

    A key that is absent reads as ``None`` (the SDK's optional fields, such as
    ``delta.content`` on a tool-call delta, are ``None`` there too); names starting with ``_``
    raise ``AttributeError`` so copying and pickling behave like a plain dict.
    ``model_dump()`` / ``to_dict()`` give a plain deep copy, as on the SDK's models.
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return _wrap(self.get(name))

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def model_dump(self, **_: Any) -> dict[str, Any]:
        """A plain deep copy (the SDK's ``BaseModel.model_dump``)."""
        return _plain(self)

    def to_dict(self, **_: Any) -> dict[str, Any]:
        """A plain deep copy (the SDK's ``to_dict``)."""
        return _plain(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Chunk:
        return Chunk(copy.deepcopy(dict(self), memo))

    def __reduce__(self) -> Any:
        return (Chunk, (dict(self),))


def _wrap(value: Any) -> Any:
    # Lazily, on attribute access only: dicts become Chunks, lists of dicts lists of Chunks.
    if value.__class__ is dict:
        return Chunk(value)
    if value.__class__ is list:
        return [Chunk(v) if v.__class__ is dict else v for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def as_chunk(item: Any) -> Any:
    """``item`` as a :class:`Chunk` when it is a plain dict (anything else unchanged)."""
    return Chunk(item) if item.__class__ is dict else item
