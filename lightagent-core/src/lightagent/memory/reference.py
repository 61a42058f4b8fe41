"""``InMemoryMemory``: the reference memory backend (a dict per user, word-overlap ranking)."""

from __future__ import annotations

import re
import threading
import time
import uuid
from typing import Any

__all__ = ["InMemoryMemory", "search_terms"]

_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def search_terms(text: str) -> set[str]:
    """Lower-cased words, plus single characters of CJK runs (which have no spaces)."""
    text = str(text).casefold()
    found = set(_WORD.findall(text))
    found.update(_CJK.findall(text))
    return found


_terms = search_terms


class InMemoryMemory:
    """Memories per user, in this process; retrieval ranks by shared words.

    Each result carries ``user_id``, ``memory_id`` and the write's ``metadata``, so
    attribution filters (``MemoryPolicy``) can check where it came from.
    """

    def __init__(self, *, max_results: int = 5) -> None:
        self.max_results = max_results
        self._records: dict[str, list[dict[str, Any]]] = {}
        self._terms: dict[str, set[str]] = {}  # memory_id -> its words, made once at store
        self._lock = threading.Lock()

    def store(
        self, data: Any, user_id: str, *, metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Keep ``data`` for ``user_id``; returns ``{"stored", "memory_id", "user_id"}``."""
        record: dict[str, Any] = {
            "memory_id": uuid.uuid4().hex,
            "memory": data if isinstance(data, str) else str(data),
            "user_id": str(user_id),
            # a direct store attests a user's own memory unless its metadata says otherwise
            "metadata": {
                "source": "user",
                "scope": "user",
                **(metadata or {}),
                "user_id": str(user_id),
            },
            "created_at": time.time(),
        }
        words = _terms(record["memory"])
        with self._lock:
            self._records.setdefault(str(user_id), []).append(record)
            self._terms[record["memory_id"]] = words
        return {"stored": True, "memory_id": record["memory_id"], "user_id": str(user_id)}

    def retrieve(self, query: str, user_id: str) -> dict[str, Any]:
        """``{"results": [...]}``: this user's memories sharing words with ``query``, best first."""
        wanted = _terms(query)
        with self._lock:
            records = [
                (r, self._terms[r["memory_id"]]) for r in self._records.get(str(user_id), ())
            ]
        scored = []
        for position, (record, words) in enumerate(records):
            score = len(wanted & words)
            if score:
                scored.append((-score, -position, record))
        scored.sort(key=lambda row: (row[0], row[1]))
        results = [
            {**record, "metadata": dict(record["metadata"]), "score": -score}
            for score, _, record in scored[: self.max_results]
        ]
        return {"results": results}

    def clear(self, user_id: str | None = None) -> None:
        """Forget one user's memories, or everyone's."""
        with self._lock:
            if user_id is None:
                self._records.clear()
                self._terms.clear()
            else:
                for record in self._records.pop(str(user_id), ()):
                    self._terms.pop(record["memory_id"], None)

    def __len__(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._records.values())
