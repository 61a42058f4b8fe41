"""``SqlTokenLedger``: approval-token uses in a SQL table, one use across processes.

The kernel issues and checks :class:`~lightagent_control.security.ApprovalToken` and records each
use in a :class:`~lightagent_control.security.TokenLedger`; its in-memory ledger serves one process.
This ledger (SQLite file or PostgreSQL) makes a second use impossible across processes.
SQLAlchemy (the ``sql`` extra: ``pip install 'lightagent-core[sql]'``) is imported when a
ledger is built, never when ``lightagent`` is imported.
"""

from __future__ import annotations

import time
from typing import Any

from lightagent.errors import ApprovalError, StorageError

__all__ = ["SqlTokenLedger"]


class SqlTokenLedger:
    """A durable ledger in a SQL table (SQLAlchemy URL: ``sqlite:///file`` or ``postgresql+psycopg://…``).

    The token id is the primary key, so two processes can never both consume one token.
    """

    def __init__(self, url: Any, *, table: str = "la_approval_token_uses") -> None:
        from lightagent.extras import require

        sa = require("sqlalchemy", "sql", "SqlTokenLedger")
        if isinstance(url, str):
            if url.startswith("sqlite:///") and ":memory:" not in url:
                self.engine = sa.create_engine(url, connect_args={"timeout": 30})
            else:
                self.engine = sa.create_engine(url, pool_pre_ping=True)
        else:
            self.engine = url
        self._meta = sa.MetaData()
        self.table = sa.Table(
            table,
            self._meta,
            sa.Column("token_id", sa.String(128), primary_key=True),
            sa.Column("operation", sa.String(256), nullable=False, default=""),
            sa.Column("run_id", sa.String(256), nullable=True),
            sa.Column("used_at", sa.Float, nullable=False),
        )
        try:
            self._meta.create_all(self.engine)
        except Exception as exc:
            raise StorageError(
                "LA-STORAGE-UNAVAILABLE", f"cannot prepare the token ledger: {type(exc).__name__}"
            ) from exc

    def consume(self, token_id: str, *, operation: str = "", run_id: str | None = None) -> None:
        """Insert the use; the primary key turns a second use into ``LA-APPROVAL-REPLAY``."""
        import sqlalchemy as sa

        try:
            with self.engine.begin() as conn:
                conn.execute(
                    self.table.insert().values(
                        token_id=token_id, operation=operation, run_id=run_id, used_at=time.time()
                    )
                )
        except sa.exc.IntegrityError:
            raise ApprovalError(
                "LA-APPROVAL-REPLAY",
                "approval token already used",
                details={"token_id": token_id, "operation": operation},
            ) from None
        except sa.exc.SQLAlchemyError as exc:
            raise StorageError(
                "LA-STORAGE", f"the token ledger failed: {type(exc).__name__}"
            ) from exc

    def is_used(self, token_id: str) -> bool:
        """Whether the token was consumed (by any process)."""
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(self.table.c.token_id).where(self.table.c.token_id == token_id)
            ).first()
        return row is not None

    def close(self) -> None:
        """Dispose of the connection pool."""
        self.engine.dispose()
