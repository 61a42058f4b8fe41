"""What both SQL backends share: the tables, ingest and removal, filters, and results.

Documents live in ``<table>_documents`` and their chunks in ``<table>_chunks``; each
backend adds its full-text index (an FTS5 table on SQLite, a ``tsvector`` column with a
GIN index on PostgreSQL) through a few methods. Connections come from the core's pool
(:func:`lightagent.sql_conn.open_database`). Every filter is a SQL condition next to the
full-text match, so it narrows the candidates *before* ``LIMIT``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from lightagent.errors import (
    ConfigurationError,
    LightAgentError,
    PolicyError,
    StorageError,
    ValidationError,
)
from lightagent.sql_conn import Database

from lightagent_rag_fts._text import Term, chunk_text, index_text, query_terms
from lightagent_rag_fts.models import (
    RetrievalDocument,
    RetrievalResult,
    as_document,
    check_limit,
)

__all__ = ["SqlRetrievalBase"]

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")
_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
#: Filters that are columns of every chunk; any other filter key is looked up in metadata.
_COLUMNS = ("tenant_id", "owner_id", "scope", "document_id", "source")
_RESULT_COLUMNS = (
    "c.chunk_id, c.document_id, c.position, c.content, c.title, c.source, c.scope, "
    "c.owner_id, c.tenant_id, d.metadata"
)
MAX_LIMIT = 100
#: Document ids per ``IN (...)`` list (under SQLite's 999 bound-parameter floor).
_ID_BATCH = 500


def _check_sizes(chunk_size: int, chunk_overlap: int) -> None:
    if not isinstance(chunk_size, int) or chunk_size < 100:
        raise ConfigurationError(
            "LA-CONFIG",
            f"chunk_size must be an int of at least 100, got {chunk_size!r}",
            hint="Use chunk_size=1200 (the default) or another size >= 100.",
        )
    if not isinstance(chunk_overlap, int) or not 0 <= chunk_overlap <= chunk_size // 2:
        raise ConfigurationError(
            "LA-CONFIG",
            f"chunk_overlap must be between 0 and chunk_size // 2, got {chunk_overlap!r}",
            hint="Use chunk_overlap=120 (the default) or a value up to half of chunk_size.",
        )


def _check_table(table: str) -> str:
    if not isinstance(table, str) or not _TABLE.match(table):
        raise ConfigurationError(
            "LA-CONFIG",
            f"table must be a plain SQL name (letters, digits, _), got {table!r}",
            hint="Use table='lightagent_rag' or another identifier.",
        )
    return table


class SqlRetrievalBase:
    """Ingest, remove, list, read and search over ``<table>_documents`` / ``<table>_chunks``.

    Subclasses provide :meth:`_schema`, :meth:`_insert_chunks`, :meth:`_delete_index`
    and :meth:`_match` for their full-text engine.
    """

    dialect = ""

    def __init__(
        self,
        db: Database,
        *,
        table: str,
        chunk_size: int,
        chunk_overlap: int,
        require_tenant: bool | None,
    ) -> None:
        _check_sizes(chunk_size, chunk_overlap)
        self.table = _check_table(table)
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.require_tenant = require_tenant
        self._db = db
        with self._tx(write=True) as cur:
            for statement in self._schema():
                cur.execute(statement)

    # -- to be provided by each backend ----------------------------------------------
    def _schema(self) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _insert_chunks(self, cur: Any, rows: list[tuple[Any, ...]]) -> None:  # pragma: no cover
        """Insert chunk rows ``(chunk_id, document_id, position, content, title, source,
        scope, owner_id, tenant_id)`` and their index entries."""
        raise NotImplementedError

    def _delete_index(
        self, cur: Any, marks: str | None, ids: list[str]
    ) -> None:  # pragma: no cover
        """Drop the index entries of the chunks of documents ``ids`` (``marks`` is their
        ``?, ?`` list); all of them for ``marks=None``."""
        raise NotImplementedError

    def _match(self, terms: list[Term]) -> tuple[str, str, str, list[Any]]:  # pragma: no cover
        """``(from_clause, where_clause, rank_expression, params)`` for a full-text match."""
        raise NotImplementedError

    # -- plumbing ----------------------------------------------------------------------
    def sql(self, text: str) -> str:
        """``text`` with the table prefix put in (``{t}``) and the driver's placeholders."""
        return self._db.sql(text.replace("{t}", self.table))

    @contextmanager
    def _tx(self, *, write: bool) -> Iterator[Any]:
        db = self._db
        try:
            with db.transaction(write=write) as cur:
                yield cur
        except LightAgentError:
            raise
        except db.unavailable as exc:
            raise StorageError(
                "LA-STORAGE-UNAVAILABLE",
                f"the retrieval index is not reachable: {type(exc).__name__}: {str(exc).strip()[:200]}",
                details={"backend": self.dialect, "exception": type(exc).__name__},
            ) from exc
        except db.database_error as exc:
            raise StorageError(
                "LA-RETRIEVAL",
                f"the retrieval index failed: {type(exc).__name__}: {str(exc).strip()[:200]}",
                details={"backend": self.dialect, "exception": type(exc).__name__},
            ) from exc

    def close(self) -> None:
        """Close the pooled connections."""
        self._db.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------
    def _chunk_rows(self, doc: RetrievalDocument) -> list[tuple[Any, ...]]:
        pieces = chunk_text(doc.content, self.chunk_size, self.chunk_overlap)
        return [
            (
                f"{doc.document_id}:{position}",
                doc.document_id,
                position,
                piece,
                doc.title,
                doc.source,
                doc.scope,
                doc.owner_id,
                doc.tenant_id,
            )
            for position, piece in enumerate(pieces)
        ]

    def _delete(self, cur: Any, document_ids: list[str]) -> int:
        """Delete documents with their chunks, a few hundred ids per statement; how many existed."""
        removed = 0
        for start in range(0, len(document_ids), _ID_BATCH):
            ids = document_ids[start : start + _ID_BATCH]
            marks = ", ".join("?" for _ in ids)
            self._delete_index(cur, marks, ids)
            cur.execute(self.sql(f"DELETE FROM {{t}}_chunks WHERE document_id IN ({marks})"), ids)
            cur.execute(
                self.sql(f"DELETE FROM {{t}}_documents WHERE document_id IN ({marks})"), ids
            )
            removed += max(cur.rowcount or 0, 0)
        return removed

    def ingest(self, documents: Any) -> Any:
        """Index one document or many (``RetrievalDocument``, dicts, or plain strings).

        Each is cut into chunks of about ``chunk_size`` characters on paragraph and
        sentence boundaries; re-ingesting a ``document_id`` replaces the old version in
        the same transaction. Returns the document's id for one document (as the seeds
        do), the ids in order for a list.
        """
        single = isinstance(documents, (Mapping, str, RetrievalDocument)) or not isinstance(
            documents, Iterable
        )
        if single:
            documents = [documents]
        docs = [as_document(d) for d in documents]
        unique = _last_wins(docs)
        rows = [row for doc in unique for row in self._chunk_rows(doc)]
        with self._tx(write=True) as cur:
            self._delete(cur, [d.document_id for d in unique])
            cur.executemany(
                self.sql(
                    "INSERT INTO {t}_documents (document_id, title, source, scope, owner_id, "
                    "tenant_id, created_at, metadata, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                [
                    (
                        d.document_id,
                        d.title,
                        d.source,
                        d.scope,
                        d.owner_id,
                        d.tenant_id,
                        float(d.created_at),
                        json.dumps(d.metadata, ensure_ascii=False, sort_keys=True, default=str),
                        d.content,
                    )
                    for d in unique
                ],
            )
            if rows:
                self._insert_chunks(cur, rows)
        ids = [d.document_id for d in docs]
        return ids[0] if single else ids

    def remove(self, document_id: str) -> bool:
        """Drop a document and its chunks; whether it existed."""
        with self._tx(write=True) as cur:
            return self._delete(cur, [str(document_id)]) > 0

    def reindex(self) -> int:
        """Re-chunk every stored document (after a ``chunk_size`` change) and rebuild the
        index in one transaction; returns the number of chunks."""
        with self._tx(write=True) as cur:
            cur.execute(
                self.sql(
                    "SELECT document_id, content, title, source, scope, owner_id, tenant_id "
                    "FROM {t}_documents ORDER BY document_id"
                )
            )
            docs = [
                RetrievalDocument(
                    content=r[1], document_id=r[0], title=r[2], source=r[3], scope=r[4],
                    owner_id=r[5], tenant_id=r[6],
                )
                for r in cur.fetchall()
            ]  # fmt: skip
            self._delete_index(cur, None, [])
            cur.execute(self.sql("DELETE FROM {t}_chunks"))
            rows = [row for doc in docs for row in self._chunk_rows(doc)]
            if rows:
                self._insert_chunks(cur, rows)
        return len(rows)

    # -- reading -----------------------------------------------------------------------
    def _filters(self, filters: Mapping[str, Any], alias: str) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        for key, wanted in filters.items():
            if wanted is None:
                continue
            if not isinstance(key, str) or not _KEY.match(key):
                raise ValidationError(
                    "LA-VALIDATION",
                    f"a retrieval filter name must be a plain key, got {key!r}",
                    hint="Filter on tenant_id, owner_id, scope, document_id, source or a metadata key.",
                    details={"filter": str(key)[:80]},
                )
            values = list(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]
            if not values:
                where.append("1 = 0")
                continue
            marks = ", ".join("?" for _ in values)
            if key in _COLUMNS:
                where.append(f"{alias}.{key} IN ({marks})")
                params.extend(str(v) for v in values)
            else:
                expression, encoded = self._metadata_filter(key, values)
                where.append(expression)
                params.extend(encoded)
        return where, params

    def _metadata_filter(
        self, key: str, values: list[Any]
    ) -> tuple[str, list[Any]]:  # pragma: no cover
        raise NotImplementedError

    def _check_tenant(self, cur: Any, filters: Mapping[str, Any]) -> None:
        if filters.get("tenant_id") is not None or self.require_tenant is False:
            return
        cur.execute(self.sql("SELECT 1 FROM {t}_documents WHERE tenant_id IS NOT NULL LIMIT 1"))
        if self.require_tenant or cur.fetchone() is not None:
            raise PolicyError(
                "LA-RETRIEVAL-TENANT",
                "this index holds documents of several tenants; a search must name one",
                hint="Pass tenant_id= (a run's metadata tenant_id reaches the search tool), "
                "or build the provider with require_tenant=False.",
                details={"table": self.table},
            )

    def search(self, query: str, *, limit: int = 5, **filters: Any) -> list[RetrievalResult]:
        """The ``limit`` best chunks for ``query``, narrowed by ``filters`` inside the query.

        ``query`` is plain text: its words are searched (any of them; chunks with more of
        them, and title matches, rank higher; words of four or more letters also as
        prefixes, ranked below the exact word), never parsed as query syntax. Filters on
        ``tenant_id``, ``owner_id``, ``scope``, ``document_id`` and ``source`` match those
        fields, any other key a metadata value (a list matches any of its values). On an
        index that holds tenants, a search without ``tenant_id`` raises
        ``LA-RETRIEVAL-TENANT`` rather than search every tenant's documents.
        """
        limit = min(check_limit(limit), MAX_LIMIT)
        terms = query_terms(str(query or ""), prefixes=True)
        if not terms or limit <= 0:
            return []
        where, params = self._filters(filters, "c")
        from_clause, match, rank, match_params = self._match(terms)
        sql = (
            f"SELECT {_RESULT_COLUMNS}, {rank} AS score FROM {from_clause} "
            f"WHERE {' AND '.join([match, *where])} ORDER BY score DESC, c.id LIMIT ?"
        )
        with self._tx(write=False) as cur:
            self._check_tenant(cur, filters)
            cur.execute(self.sql(sql), (*match_params, *params, limit))
            rows = cur.fetchall()
        return [_result(row, score=float(row[10])) for row in rows]

    def read_chunk(self, chunk_id: str) -> RetrievalResult | None:
        """One chunk by id (``rag:<chunk_id>`` citations are accepted), or ``None``."""
        chunk_id = str(chunk_id)
        if chunk_id.startswith("rag:"):
            chunk_id = chunk_id[4:]
        with self._tx(write=False) as cur:
            cur.execute(
                self.sql(
                    f"SELECT {_RESULT_COLUMNS} FROM {{t}}_chunks c JOIN {{t}}_documents d "
                    "ON d.document_id = c.document_id WHERE c.chunk_id = ?"
                ),
                (chunk_id,),
            )
            row = cur.fetchone()
        return None if row is None else _result(row, score=None)

    def list_documents(self, **filters: Any) -> list[RetrievalDocument]:
        """The stored documents matching ``filters`` (same keys as :meth:`search`), by id."""
        where, params = self._filters(filters, "d")
        sql = (
            "SELECT d.document_id, d.content, d.title, d.source, d.scope, d.owner_id, "
            "d.tenant_id, d.created_at, d.metadata FROM {t}_documents d"
        )
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._tx(write=False) as cur:
            cur.execute(self.sql(sql + " ORDER BY d.document_id"), params)
            rows = cur.fetchall()
        return [
            RetrievalDocument(
                document_id=r[0], content=r[1], title=r[2], source=r[3], scope=r[4],
                owner_id=r[5], tenant_id=r[6], created_at=float(r[7]), metadata=_metadata(r[8]),
            )
            for r in rows
        ]  # fmt: skip

    def count_chunks(self) -> int:
        """How many chunks the index holds."""
        with self._tx(write=False) as cur:
            cur.execute(self.sql("SELECT COUNT(*) FROM {t}_chunks"))
            row = cur.fetchone()
        return int(row[0]) if row else 0


def _metadata(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _result(row: tuple[Any, ...], *, score: float | None) -> RetrievalResult:
    return RetrievalResult(
        chunk_id=row[0],
        document_id=row[1],
        position=int(row[2]),
        content=row[3],
        citation_id=f"rag:{row[0]}",
        title=row[4],
        source=row[5],
        scope=row[6],
        owner_id=row[7],
        tenant_id=row[8],
        metadata=_metadata(row[9]),
        score=score,
    )


def _last_wins(docs: list[RetrievalDocument]) -> list[RetrievalDocument]:
    """One row per document id: a batch naming an id twice keeps its last version."""
    return list({d.document_id: d for d in docs}.values())


def index_fields(row: tuple[Any, ...]) -> tuple[str, str]:
    """The ``(title, body)`` index text of a chunk row."""
    return index_text(row[4] or ""), index_text(row[3])
