"""``PostgresFTSRetrievalProvider``: the same retrieval on PostgreSQL full text.

Each chunk carries a ``tsvector`` (title weighted ``A``, body ``B``, under the
``simple`` configuration: no stemming, no stop words, any language) with a GIN index.
The index text is the one SQLite gets (CJK as bigrams, see :mod:`lightagent_rag_fts._text`),
so no ``pg_trgm`` or ICU is needed and both backends find the same chunks. A query is an
``|`` of quoted lexemes built here; ranking is ``ts_rank_cd``, where the weights make a
title match count 2.5 times a body one.
"""

from __future__ import annotations

import json
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.sql_conn import open_database

from lightagent_rag_fts._sql import SqlRetrievalBase, index_fields
from lightagent_rag_fts._text import Term

__all__ = ["PostgresFTSRetrievalProvider"]

#: ``ts_rank_cd`` weights for D, C, B (body) and A (title).
RANK_WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"


class PostgresFTSRetrievalProvider(SqlRetrievalBase):
    """Documents, chunks and a GIN-indexed ``tsvector`` in PostgreSQL (``psycopg`` 3).

    ``url`` is ``postgresql://…`` or ``postgresql+psycopg://…``; ``table`` prefixes the
    two tables (the schema is the connection's ``search_path``). The other arguments are
    :class:`~lightagent_rag_fts.SqliteFTSRetrievalProvider`'s.
    """

    dialect = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        chunk_size: int = 1200,
        chunk_overlap: int = 120,
        table: str = "lightagent_rag",
        require_tenant: bool | None = None,
        connect_timeout: float = 5.0,
    ) -> None:
        scheme = str(url).partition("://")[0]
        if scheme not in ("postgresql", "postgres", "postgresql+psycopg"):
            raise ConfigurationError(
                "LA-CONFIG",
                f"PostgresFTSRetrievalProvider needs a postgresql:// URL, not {scheme}://",
                hint="Use 'postgresql://user@host/db' or 'postgresql+psycopg://user@host/db'.",
            )
        self.url = str(url)
        db = open_database(
            str(url),
            sqlite_file=None,
            synchronous="NORMAL",
            busy_timeout_ms=int(connect_timeout * 1000),
            needed_by="PostgresFTSRetrievalProvider",
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
            # Two providers creating the same tables at once must not collide on the catalog.
            f"SELECT pg_advisory_xact_lock(hashtext('lightagent_rag_fts:{t}'))",
            f"CREATE TABLE IF NOT EXISTS {t}_documents (document_id TEXT PRIMARY KEY, title TEXT, "
            "source TEXT, scope TEXT, owner_id TEXT, tenant_id TEXT, created_at DOUBLE PRECISION, "
            "metadata JSONB NOT NULL DEFAULT '{}'::jsonb, content TEXT NOT NULL)",
            f"CREATE INDEX IF NOT EXISTS {t}_documents_tenant ON {t}_documents (tenant_id)",
            f"CREATE TABLE IF NOT EXISTS {t}_chunks (id BIGSERIAL PRIMARY KEY, chunk_id TEXT NOT NULL "
            "UNIQUE, document_id TEXT NOT NULL, position INTEGER NOT NULL, content TEXT NOT NULL, "
            "title TEXT, source TEXT, scope TEXT, owner_id TEXT, tenant_id TEXT, tsv TSVECTOR NOT NULL)",
            f"CREATE INDEX IF NOT EXISTS {t}_chunks_document ON {t}_chunks (document_id)",
            f"CREATE INDEX IF NOT EXISTS {t}_chunks_tenant ON {t}_chunks (tenant_id)",
            f"CREATE INDEX IF NOT EXISTS {t}_chunks_tsv ON {t}_chunks USING GIN (tsv)",
        ]

    def _insert_chunks(self, cur: Any, rows: list[tuple[Any, ...]]) -> None:
        cur.executemany(
            self.sql(
                "INSERT INTO {t}_chunks (chunk_id, document_id, position, content, title, source, "
                "scope, owner_id, tenant_id, tsv) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "setweight(to_tsvector('simple', ?), 'A') || setweight(to_tsvector('simple', ?), 'B'))"
            ),
            [(*row, *index_fields(row)) for row in rows],
        )

    def _delete_index(self, cur: Any, marks: str | None, ids: list[str]) -> None:
        return None  # the tsvector is a column of the chunk: deleting the chunk drops it

    def _match(self, terms: list[Term]) -> tuple[str, str, str, list[Any]]:
        # Terms hold letters and digits only, so a single-quoted term is always a lexeme
        # literal: &, |, !, <->, :* in the user's text are never operators.
        expression = " | ".join(f"'{text}'" + (":*" if prefix else "") for text, prefix in terms)
        # ts_rank_cd counts a lexeme once however many operands it matches, so the exact
        # words are ranked again on their own: an exact match beats a prefix-only one.
        exact = " | ".join(f"'{text}'" for text, prefix in terms if not prefix) or expression
        return (
            "{t}_chunks c JOIN {t}_documents d ON d.document_id = c.document_id, "
            "to_tsquery('simple', ?) q, to_tsquery('simple', ?) qx",
            "c.tsv @@ q",
            f"ts_rank_cd('{RANK_WEIGHTS}'::float4[], c.tsv, q) "
            f"+ ts_rank_cd('{RANK_WEIGHTS}'::float4[], c.tsv, qx)",
            [expression, exact],
        )

    def _metadata_filter(self, key: str, values: list[Any]) -> tuple[str, list[Any]]:
        marks = ", ".join("?::jsonb" for _ in values)
        return f"(d.metadata -> ?) IN ({marks})", [key, *(json.dumps(v) for v in values)]
