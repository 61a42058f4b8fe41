"""The memory backend and hook implementations of lightagent-plugin-memory-jsonl.

``JsonlMemory`` keeps memories in one JSON Lines file (one record a line, appended and
flushed to disk), so they survive restarts. It follows ``MemoryProtocol``: ``store`` and
``retrieve`` with the mem0 result shape, each result attributed to its user. Registered
as a factory, so an agent picks it by name with configuration:
``LightAgent(memory=("jsonl-memory", {"path": "memories.jsonl"}))``.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from lightagent import ConnectorManifest, hookimpl

from lightagent_plugin_memory_jsonl import __version__

_WORD = re.compile(r"\w+")


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(str(text).casefold()) if len(w) > 1}


class JsonlMemory:
    """Memories per user in a JSON Lines file; ``retrieve`` ranks by shared words."""

    def __init__(self, path: str | os.PathLike[str], *, max_results: int = 5) -> None:
        self.path = Path(path)
        self.max_results = max_results
        self._lock = threading.Lock()

    def store(
        self, data: Any, user_id: str, *, metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Append one memory for ``user_id``."""
        record = {
            "memory_id": uuid.uuid4().hex,
            "memory": str(data),
            "user_id": str(user_id),
            "metadata": {**(metadata or {}), "user_id": str(user_id)},
            "created_at": time.time(),
        }
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        return {"stored": True, "memory_id": record["memory_id"], "user_id": str(user_id)}

    def _records(self, user_id: str) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        with self._lock, self.path.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a torn last line from a crash: skip it, keep the rest
                if record.get("user_id") == str(user_id):
                    out.append(record)
        return out

    def retrieve(self, query: str, user_id: str) -> dict[str, Any]:
        """``{"results": [...]}``: this user's memories sharing words with ``query``."""
        wanted = _terms(query)
        scored = []
        for position, record in enumerate(self._records(user_id)):
            score = len(wanted & _terms(record["memory"]))
            if score:
                scored.append((score, position, record))
        scored.sort(key=lambda row: (-row[0], -row[1]))
        return {"results": [dict(r, score=s) for s, _, r in scored[: self.max_results]]}


@hookimpl
def register_memory(register: Any) -> None:
    """Register the ``jsonl-memory`` backend factory (configuration: ``path``)."""
    register("jsonl-memory", "lightagent_plugin_memory_jsonl.plugin:JsonlMemory")


@hookimpl
def lightagent_manifest() -> ConnectorManifest:
    """What this plugin brings."""
    return ConnectorManifest(
        name="lightagent-plugin-memory-jsonl",
        version=__version__,
        description="A memory backend in one JSON Lines file.",
        providers={"memory": ("jsonl-memory",)},
        core_requires=">=0.1.0,<0.2",
    )
