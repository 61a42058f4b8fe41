"""``SqliteFTSRetrievalProvider``: retrieval on a SQLite file with an FTS5 index.

The FTS5 table holds each chunk's title and body as index text (words, CJK as
bigrams: see :mod:`lightagent_rag_fts._text`) under the ``unicode61`` tokenizer, so no
ICU and no extension is needed. A query is an ``OR`` of quoted terms built here; ranking
is FTS5's ``bm25`` with the title column weighted :attr:`TITLE_WEIGHT` times the body.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.sql_conn import open_database

from lightagent_rag_fts._sql import SqlRetrievalBase, index_fields
from lightagent_rag_fts._text import Term

__all__ = ["SqliteFTSRetrievalProvider"]

#: How much more a title match counts than a body match in ``bm25``.
TITLE_WEIGHT = 3.0

#: The location the seeds' runtime guide uses: its folder is made on demand, as for the
#: session store's default ``.lightagent/sessions.sqlite3``.
DEFAULT_PATH = ".lightagent/knowledge.sqlite3"


class SqliteFTSRetrievalProvider(SqlRetrievalBase):
    """Documents, chunks and an FTS5 index in one SQLite file (WAL, pooled connections).

    ``path`` is a file (its folder must exist, unless ``create_dirs=True`` or the path is
    :data:`DEFAULT_PATH`) or ``":memory:"``; ``table`` prefixes the
    three tables, so several indexes can share a file. ``require_tenant``: ``None`` (the
    default) refuses a search without ``tenant_id`` once any document has a tenant;
    ``True`` always; ``False`` never. Citations are ``rag:<document_id>:<position>``.
    """

    dialect = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        chunk_size: int = 1200,
        chunk_overlap: int = 120,
        table: str = "rag",
        require_tenant: bool | None = None,
        busy_timeout_ms: int = 5000,
        create_dirs: bool | None = None,
    ) -> None:
        target = str(path)
        if target != ":memory:":
            folder = Path(target).expanduser().resolve().parent
            if create_dirs is None:  # a typo elsewhere stays an error, not a new folder
                create_dirs = Path(target) == Path(DEFAULT_PATH)
            if create_dirs and not folder.is_dir():
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise ConfigurationError(
                        "LA-CONFIG",
                        f"cannot create the folder of the retrieval index {folder}: {exc}",
                        hint="Create the folder first, or pass another path.",
                        details={"path": target},
                    ) from exc
            if not folder.is_dir():
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"the folder of the retrieval index does not exist: {folder}",
                    hint="Create the folder first, pass create_dirs=True, or pass another path.",
                    details={"path": target},
                )
        self.path = target
        db = open_database(
            "sqlite://", sqlite_file=target, synchronous="NORMAL", busy_timeout_ms=busy_timeout_ms
        )
        super().__init__(
            db,
            table=table,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            require_tenant=require_tenant,
        )

    def _schema(self) -> list[str]:
        t = self.table
        return [
            f"CREATE TABLE IF NOT EXISTS {t}_documents (document_id TEXT PRIMARY KEY, title TEXT, "
            "source TEXT, scope TEXT, owner_id TEXT, tenant_id TEXT, created_at REAL, "
            "metadata TEXT NOT NULL DEFAULT '{}', content TEXT NOT NULL)",
            f"CREATE INDEX IF NOT EXISTS {t}_documents_tenant ON {t}_documents (tenant_id)",
            f"CREATE TABLE IF NOT EXISTS {t}_chunks (id INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL "
            "UNIQUE, document_id TEXT NOT NULL, position INTEGER NOT NULL, content TEXT NOT NULL, "
            "title TEXT, source TEXT, scope TEXT, owner_id TEXT, tenant_id TEXT)",
            f"CREATE INDEX IF NOT EXISTS {t}_chunks_document ON {t}_chunks (document_id)",
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {t}_fts USING fts5(title, body, "
            "tokenize = 'unicode61 remove_diacritics 2')",
        ]

    def _insert_chunks(self, cur: Any, rows: list[tuple[Any, ...]]) -> None:
        # Ids are assigned here, under the write lock, so chunks and index go in as two batches.
        cur.execute(self.sql("SELECT COALESCE(MAX(id), 0) FROM {t}_chunks"))
        first = int(cur.fetchone()[0]) + 1
        cur.executemany(
            self.sql(
                "INSERT INTO {t}_chunks (id, chunk_id, document_id, position, content, title, "
                "source, scope, owner_id, tenant_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            [(first + i, *row) for i, row in enumerate(rows)],
        )
        cur.executemany(
            self.sql("INSERT INTO {t}_fts (rowid, title, body) VALUES (?, ?, ?)"),
            [(first + i, *index_fields(row)) for i, row in enumerate(rows)],
        )

    def _delete_index(self, cur: Any, marks: str | None, ids: list[str]) -> None:
        if marks is None:
            cur.execute(self.sql("DELETE FROM {t}_fts"))
            return
        cur.execute(
            self.sql(
                "DELETE FROM {t}_fts WHERE rowid IN "
                f"(SELECT id FROM {{t}}_chunks WHERE document_id IN ({marks}))"
            ),
            ids,
        )

    def _match(self, terms: list[Term]) -> tuple[str, str, str, list[Any]]:
        # Terms hold letters and digits only, so a double-quoted term is always an FTS5
        # string literal: AND, NEAR, col:, *, ^ in the user's text are never operators.
        expression = " OR ".join(f'"{text}"' + ("*" if prefix else "") for text, prefix in terms)
        return (
            "{t}_fts JOIN {t}_chunks c ON c.id = {t}_fts.rowid "
            "JOIN {t}_documents d ON d.document_id = c.document_id",
            "{t}_fts MATCH ?",
            f"-bm25({{t}}_fts, {TITLE_WEIGHT}, 1.0)",
            [expression],
        )

    def _metadata_filter(self, key: str, values: list[Any]) -> tuple[str, list[Any]]:
        marks = ", ".join("?" for _ in values)
        path = '$."' + key + '"'
        encoded = [
            int(v)
            if isinstance(v, bool)
            else v
            if isinstance(v, (int, float, str))
            else json.dumps(v)
            for v in values
        ]
        return f"json_extract(d.metadata, ?) IN ({marks})", [path, *encoded]
