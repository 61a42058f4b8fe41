"""The retrieval provider and hook implementations of lightagent-plugin-notes.

``NotesRetrieval`` searches notes: the paragraphs of the ``*.md`` and ``*.txt`` files of a
folder, plus documents given to ``ingest``. Ranking is BM25 over words; filters
(``tenant_id`` or any metadata key) apply before the limit; citations are
``notes:<document_id>#<paragraph>``. Registered as a factory, so an agent picks it by
name with configuration: ``LightAgent(retrieval=("notes", {"directory": "notes/"}))``.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lightagent import ConnectorManifest, hookimpl

from lightagent_plugin_notes import __version__

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(str(text).casefold())


class NotesRetrieval:
    """Search over notes; ``directory`` (optional) is read once, at construction."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self._chunks: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        if directory is not None:
            root = Path(directory)
            if not root.is_dir():
                raise ValueError(f"notes directory {str(root)!r} does not exist")
            for path in sorted(root.rglob("*")):
                if path.suffix in (".md", ".txt") and path.is_file():
                    text = path.read_text(encoding="utf-8", errors="replace")
                    self.ingest(
                        [
                            {
                                "document_id": path.relative_to(root).as_posix(),
                                "title": path.stem,
                                "content": text,
                            }
                        ]
                    )

    def ingest(self, documents: Iterable[Mapping[str, Any]]) -> list[str]:
        """Add or replace documents (``document_id``, ``content``, optional ``title``,
        ``tenant_id``, ``metadata``); each paragraph becomes a searchable chunk."""
        ids = []
        with self._lock:
            for doc in documents:
                doc_id = str(doc["document_id"])
                self._drop(doc_id)
                paragraphs = [p.strip() for p in str(doc["content"]).split("\n\n") if p.strip()]
                for index, paragraph in enumerate(paragraphs):
                    self._chunks[f"{doc_id}#{index}"] = {
                        "document_id": doc_id,
                        "chunk_id": f"{doc_id}#{index}",
                        "title": doc.get("title"),
                        "content": paragraph,
                        "tenant_id": doc.get("tenant_id"),
                        "metadata": dict(doc.get("metadata") or {}),
                        "words": Counter(_words(f"{doc.get('title') or ''} {paragraph}")),
                    }
                ids.append(doc_id)
        return ids

    def _drop(self, document_id: str) -> int:
        doomed = [k for k, c in self._chunks.items() if c["document_id"] == document_id]
        for key in doomed:
            del self._chunks[key]
        return len(doomed)

    def remove(self, document_id: str) -> bool:
        """Forget a document; whether it existed."""
        with self._lock:
            return self._drop(str(document_id)) > 0

    def search(self, query: str, *, limit: int = 5, **filters: Any) -> list[dict[str, Any]]:
        """The ``limit`` best paragraphs for ``query`` among those matching ``filters``."""
        terms = set(_words(query))
        with self._lock:
            chunks = [c for c in self._chunks.values() if _matches(c, filters)]
        if not terms or not chunks or limit <= 0:
            return []
        average = sum(sum(c["words"].values()) for c in chunks) / len(chunks)
        scored = []
        for chunk in chunks:
            score = 0.0
            length = sum(chunk["words"].values())
            for term in terms:
                freq = chunk["words"].get(term, 0)
                if not freq:
                    continue
                having = sum(1 for c in chunks if term in c["words"])
                idf = math.log(1 + (len(chunks) - having + 0.5) / (having + 0.5))
                score += idf * freq * 2.2 / (freq + 1.2 * (0.25 + 0.75 * length / average))
            if score > 0:
                scored.append((score, chunk))
        scored.sort(key=lambda pair: (-pair[0], pair[1]["chunk_id"]))
        return [
            {
                "document_id": c["document_id"],
                "chunk_id": c["chunk_id"],
                "citation_id": f"notes:{c['chunk_id']}",
                "title": c["title"],
                "content": c["content"],
                "score": round(score, 4),
                "metadata": dict(c["metadata"]),
            }
            for score, c in scored[:limit]
        ]


def _matches(chunk: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    for key, wanted in filters.items():
        value = chunk.get(key) if key in chunk else chunk["metadata"].get(key)
        if value != wanted:
            return False
    return True


@hookimpl
def register_retrieval(register: Any) -> None:
    """Register the ``notes`` retrieval factory (configuration: ``directory``)."""
    register("notes", "lightagent_plugin_notes.plugin:NotesRetrieval")


@hookimpl
def lightagent_manifest() -> ConnectorManifest:
    """What this plugin brings."""
    return ConnectorManifest(
        name="lightagent-plugin-notes",
        version=__version__,
        description="Retrieval over a folder of Markdown and text notes.",
        providers={"retrieval": ("notes",)},
        core_requires=">=0.1.0,<0.2",
    )
