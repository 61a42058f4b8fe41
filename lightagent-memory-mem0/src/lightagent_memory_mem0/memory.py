"""``Mem0Memory``: the ``mem0ai`` library as a lightagent memory backend.

``store`` is mem0's ``add`` and ``retrieve`` its ``search``, scoped to one mem0
``user_id`` per lightagent user id. That mem0 id is a hash of the lightagent id, so no
id can reach another user's records whatever it contains (mem0 treats ``"*"`` in a
filter as "any value", refuses blanks and trims spaces; a hash has none of that). The
lightagent id and the write's provenance live in each record's metadata
(``la_user_id``: mem0 reserves ``user_id`` and ``run_id``) and come back on every
result, so ``MemoryPolicy`` checks them as for any backend; a result whose recorded
owner is not the asking user is dropped here already.

mem0 is imported on first use, with ``MEM0_TELEMETRY=False`` unless you set it.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lightagent import ConfigurationError, LightAgentError, StorageError

__all__ = ["Mem0Memory", "mem0_user_id"]

#: mem0 keeps these keys for its own scoping: provenance under these names is renamed.
_RESERVED = {
    "user_id": "la_user_id",
    "run_id": "la_run_id",
    "agent_id": "la_agent_id",
    "actor_id": "la_actor_id",
}
_RESTORED = {v: k for k, v in _RESERVED.items()}


def mem0_user_id(user_id: str) -> str:
    """The mem0 ``user_id`` a lightagent user id is stored under (a hash: no id can spell another)."""
    digest = hashlib.sha256(str(user_id).encode("utf-8", "surrogatepass")).hexdigest()
    return f"la{digest[:40]}"


def _import_mem0() -> Any:
    # mem0 reads MEM0_TELEMETRY once, at import: decide before the first import.
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    try:
        import mem0  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ConfigurationError(
            "LA-MISSING-EXTRA",
            f"Mem0Memory needs the mem0ai package ({exc})",
            hint="pip install lightagent-memory-mem0 (it depends on mem0ai)",
        ) from exc
    return mem0


class Mem0Memory:
    """mem0 long-term memory (``store``/``retrieve`` of ``MemoryProtocol``).

    Pass a ready mem0 ``Memory`` as ``memory``, a mem0 configuration dict as ``config``,
    or let it build one: an OpenAI-compatible LLM and embedder at ``base_url`` (else
    ``OPENAI_BASE_URL``) with ``api_key`` (else ``OPENAI_API_KEY``), and an embedded
    Qdrant store — on disk under ``path`` (with mem0's history database), or in memory
    when ``path`` is None. ``infer=True`` lets mem0's LLM extract facts from each write
    (mem0's default); ``infer=False`` stores the text as given. Calls are serialised per
    instance: mem0's embedded stores are not thread-safe.
    """

    def __init__(
        self,
        memory: Any = None,
        *,
        config: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        llm_model: str = "gpt-4o-mini",
        embedding_model: str = "text-embedding-3-small",
        embedding_dims: int | None = None,
        path: str | os.PathLike[str] | None = None,
        collection_name: str = "lightagent",
        infer: bool = True,
        limit: int = 5,
        threshold: float | None = None,
    ) -> None:
        if memory is not None and config is not None:
            raise ConfigurationError("LA-CONFIG", "Mem0Memory takes memory= or config=, not both")
        if memory is not None and not (
            callable(getattr(memory, "add", None)) and callable(getattr(memory, "search", None))
        ):
            raise ConfigurationError(
                "LA-CONFIG",
                f"Mem0Memory(memory=...) needs a mem0 Memory (add and search), got {type(memory).__name__}",
            )
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigurationError(
                "LA-CONFIG", f"Mem0Memory(limit=...) must be >= 1, got {limit!r}"
            )
        if embedding_dims is not None and (
            isinstance(embedding_dims, bool)
            or not isinstance(embedding_dims, int)
            or embedding_dims < 1
        ):
            raise ConfigurationError(
                "LA-CONFIG", f"Mem0Memory(embedding_dims=...) must be >= 1, got {embedding_dims!r}"
            )
        self.infer = bool(infer)
        self.limit = limit
        self.threshold = threshold
        self._config = dict(config) if config is not None else None
        self._settings = {
            "base_url": base_url,
            "api_key": api_key,
            "llm_model": llm_model,
            "embedding_model": embedding_model,
            "embedding_dims": embedding_dims,
            "collection_name": collection_name,
        }
        self._path = None if path is None else Path(path)
        self._memory = memory
        self._lock = threading.RLock()

    # -- the mem0 instance ---------------------------------------------------------------
    @property
    def memory(self) -> Any:
        """The mem0 ``Memory`` (built on first use)."""
        with self._lock:
            if self._memory is None:
                self._memory = self._build()
            return self._memory

    def _build(self) -> Any:
        mem0 = _import_mem0()
        config = self._config if self._config is not None else self._default_config()
        try:
            with warnings.catch_warnings():
                # embedded Qdrant says its payload indexes do nothing: true, and not the user's to fix
                warnings.filterwarnings("ignore", message="Payload indexes have no effect")
                return mem0.Memory.from_config(config)
        except Exception as exc:
            raise _wrapped(exc, "could not be built from its configuration", "LA-CONFIG") from exc

    def _default_config(self) -> dict[str, Any]:
        s = self._settings
        dims = s["embedding_dims"]
        common = {"openai_base_url": s["base_url"], "api_key": s["api_key"]}
        embedder = {"model": s["embedding_model"], **common}
        if dims is not None:
            embedder["embedding_dims"] = dims
        store: dict[str, Any] = {
            "collection_name": s["collection_name"],
            "embedding_model_dims": dims or 1536,
        }
        path = self._path
        if path is None:
            from qdrant_client import QdrantClient

            store.update(client=QdrantClient(location=":memory:"), path=":memory:")
            history = ":memory:"
        else:
            path.mkdir(parents=True, exist_ok=True)
            store.update(path=str(path / "qdrant"), on_disk=True)
            history = str(path / "history.db")
        return {
            "llm": {"provider": "openai", "config": {"model": s["llm_model"], **common}},
            "embedder": {"provider": "openai", "config": embedder},
            "vector_store": {"provider": "qdrant", "config": store},
            "history_db_path": history,
        }

    # -- MemoryProtocol ------------------------------------------------------------------
    def store(
        self, data: Any, user_id: str, *, metadata: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Add ``data`` to ``user_id``'s mem0 memories (with its provenance)."""
        text = data if isinstance(data, str) else str(data)
        if not text.strip():
            raise StorageError("LA-MEMORY", "Mem0Memory.store needs non-empty data")
        meta = _to_mem0(metadata, user_id)
        with self._lock:
            try:
                answer = self.memory.add(
                    text, user_id=mem0_user_id(user_id), metadata=meta, infer=self.infer
                )
            except LightAgentError:
                raise
            except Exception as exc:
                raise _wrapped(exc, "add failed") from exc
        ids = [r.get("id") for r in (answer or {}).get("results", []) if isinstance(r, dict)]
        return {
            "stored": bool(ids),
            "memory_id": ids[0] if ids else None,
            "memory_ids": ids,
            "user_id": user_id,
        }

    def retrieve(self, query: str, user_id: str) -> dict[str, Any]:
        """``{"results": [...]}``: ``user_id``'s mem0 memories closest to ``query``."""
        if not isinstance(query, str) or not query.strip():
            return {"results": []}
        scoped = mem0_user_id(user_id)
        kwargs: dict[str, Any] = {"top_k": self.limit, "filters": {"user_id": scoped}}
        if self.threshold is not None:
            kwargs["threshold"] = self.threshold
        with self._lock:
            try:
                answer = self.memory.search(query, **kwargs)
            except LightAgentError:
                raise
            except Exception as exc:
                raise _wrapped(exc, "search failed") from exc
        results = []
        for item in (answer or {}).get("results", []):
            if not isinstance(item, dict) or item.get("user_id") not in (None, scoped):
                continue  # mem0 scoped it to another id: never hand it on
            result = _from_mem0(item, user_id)
            if result is not None:
                results.append(result)
        return {"results": results}

    def clear(self, user_id: str) -> None:
        """Delete every mem0 memory of ``user_id``."""
        with self._lock:
            self.memory.delete_all(user_id=mem0_user_id(user_id))

    def close(self) -> None:
        """Close mem0's stores (a later call builds them again)."""
        with self._lock:
            memory, self._memory = self._memory, None
        closer = getattr(memory, "close", None)
        if callable(closer):
            closer()

    def __repr__(self) -> str:
        where = self._path or "memory"
        return f"Mem0Memory({where}, infer={self.infer})"


def _to_mem0(metadata: Mapping[str, Any] | None, user_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (metadata or {}).items():
        if value is None:
            continue
        out[_RESERVED.get(key, key)] = value
    out["la_user_id"] = user_id  # the owner is who it is stored for, whatever metadata says
    return out


def _from_mem0(item: Mapping[str, Any], user_id: str) -> dict[str, Any] | None:
    raw = item.get("metadata")
    meta = {_RESTORED.get(k, k): v for k, v in (raw.items() if isinstance(raw, Mapping) else ())}
    owner = meta.get("user_id")
    if owner is not None and owner != user_id:
        return None  # recorded for someone else: dropped before any policy sees it
    result: dict[str, Any] = {
        "memory": item.get("memory", ""),
        "memory_id": item.get("id"),
        "id": item.get("id"),
        "metadata": meta,
        "score": item.get("score"),
        "created_at": item.get("created_at"),
    }
    if owner is not None:
        result["user_id"] = owner
    return result


def _wrapped(exc: Exception, what: str, code: str = "LA-MEMORY") -> LightAgentError:
    text = str(exc).strip()[:300]
    if "already accessed by another instance" in text:
        return StorageError(
            "LA-STORAGE",
            f"mem0's embedded Qdrant store is open elsewhere: {text}",
            hint="One Mem0Memory per path at a time; give each its own path=, or use a Qdrant server.",
        )
    error_type = ConfigurationError if code == "LA-CONFIG" else StorageError
    return error_type(
        code,
        f"mem0 {what}: {type(exc).__name__}: {text}",
        hint="Check the mem0 configuration (LLM and embedder base_url, api_key, vector store).",
        details={"exception": type(exc).__name__},
    )
