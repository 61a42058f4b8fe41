"""``SqlLightFlowStore``: flow runs in SQL through SQLAlchemy 2 (SQLite file or PostgreSQL).

``SqlLightFlowStore("sqlite:///runs.db")`` (or a bare path) keeps runs in one SQLite
file in WAL mode with ``synchronous=FULL`` and ``BEGIN IMMEDIATE`` writes;
``SqlLightFlowStore("postgresql+psycopg://…")`` moves them to PostgreSQL so several hosts
share them. A step commit is one upsert in one transaction.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lightagent.errors import ConfigurationError, PluginError, StorageError

from lightagent_flow.stores.base import FaultHook, assemble_record, check_run_id, fenced_out

__all__ = ["SqlLightFlowStore"]


def _schema(sa: Any) -> tuple[Any, Any, Any, Any]:
    meta = sa.MetaData()
    runs = sa.Table(
        "lightflow_runs",
        meta,
        sa.Column("run_id", sa.String(128), primary_key=True),
        sa.Column("status", sa.String(32), nullable=False, default="pending"),
        sa.Column("updated_at", sa.Float, nullable=False, default=0.0),
        sa.Column("header", sa.Text, nullable=False),
        sa.Column("cancel_requested", sa.Boolean, nullable=False, default=False),
        sa.Column("epoch", sa.Integer, nullable=False, default=0),
    )
    steps = sa.Table(
        "lightflow_steps",
        meta,
        sa.Column("run_id", sa.String(128), primary_key=True),
        sa.Column("name", sa.String(512), primary_key=True),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
    )
    approvals = sa.Table(
        "lightflow_approvals",
        meta,
        sa.Column("run_id", sa.String(128), primary_key=True),
        sa.Column("step", sa.String(512), primary_key=True),
        sa.Column("decision", sa.Text, nullable=False),
    )
    return meta, runs, steps, approvals


def _url(url: str) -> str:
    return url if "://" in url else f"sqlite:///{url}"


class SqlLightFlowStore:
    """Flow run records in a SQL database named by a SQLAlchemy URL (or a SQLite file path)."""

    blocking = True

    def __init__(self, url: str, *, echo: bool = False) -> None:
        try:
            import sqlalchemy as sa
        except ImportError as exc:  # pragma: no cover - a dependency of this distribution
            raise PluginError(
                "LA-MISSING-EXTRA",
                "SqlLightFlowStore needs SQLAlchemy: pip install 'sqlalchemy>=2'",
            ) from exc
        if not isinstance(url, str) or not url:
            raise ConfigurationError(
                "LA-CONFIG", f"SqlLightFlowStore needs a URL or a path, got {url!r}"
            )
        self._sa = sa
        self.url = _url(url)
        try:
            parsed = sa.engine.make_url(self.url)
        except sa.exc.ArgumentError as exc:
            raise ConfigurationError("LA-CONFIG", f"not a database URL: {url!r}") from exc
        self._sqlite = parsed.get_backend_name() == "sqlite"
        try:
            if self._sqlite:
                self._engine = self._sqlite_engine(parsed, echo)
            else:
                self._engine = sa.create_engine(parsed, echo=echo, pool_pre_ping=True)
        except sa.exc.NoSuchModuleError as exc:
            raise PluginError(
                "LA-MISSING-EXTRA",
                f"no SQLAlchemy driver for {parsed.drivername!r}: pip install 'lightagent-core[postgres]'",
            ) from exc
        except ModuleNotFoundError as exc:
            raise PluginError("LA-MISSING-EXTRA", f"missing database driver: {exc}") from exc
        self._meta, self._runs, self._steps, self._approvals = _schema(sa)
        # Created on the first write (or a read of a store that exists), never by a read:
        # a mistyped path stays a missing store instead of becoming a new empty one.
        memory = parsed.database in (None, "", ":memory:")
        self._file = Path(str(parsed.database)) if self._sqlite and not memory else None
        self._ready = False
        self._ready_lock = threading.Lock()
        self._fault: FaultHook | None = None

    def exists(self) -> bool:
        """Whether the store's tables exist (creates nothing)."""
        if self._ready:
            return True
        if self._file is not None and not self._file.is_file():
            return False
        with self._tx(read_only=True, ensure=False) as conn:
            return bool(self._sa.inspect(conn).has_table("lightflow_runs"))

    def _ensure(self) -> None:
        """Create the tables (and a SQLite file's folder) and migrate them, once."""
        if self._ready:
            return
        with self._ready_lock:
            if self._ready:
                return
            if self._file is not None:
                try:
                    self._file.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StorageError(
                        "LA-STORAGE", f"cannot create the folder of flow store {self!r}: {exc}"
                    ) from exc
            with self._tx(ensure=False) as conn:
                self._meta.create_all(conn, checkfirst=True)
                self._migrate(conn)
            self._ready = True

    def _readable(self) -> bool:
        """Whether a read has anything to read (it never creates the store)."""
        if not self._ready and self.exists():
            self._ensure()  # an existing store of an older version gets its new columns
        return self._ready

    def _migrate(self, conn: Any) -> None:
        """Add the columns newer versions need to tables an older version created."""
        columns = {c["name"] for c in self._sa.inspect(conn).get_columns("lightflow_runs")}
        if "epoch" not in columns:
            conn.exec_driver_sql(
                "ALTER TABLE lightflow_runs ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0"
            )

    def __repr__(self) -> str:
        return f"SqlLightFlowStore({self._engine.url.render_as_string(hide_password=True)!r})"

    def _sqlite_engine(self, parsed: Any, echo: bool) -> Any:
        sa = self._sa
        engine = sa.create_engine(parsed, echo=echo, connect_args={"timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (below)
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        @sa.event.listens_for(engine, "begin")
        def _begin(conn: Any) -> None:
            # IMMEDIATE for writes: a read-then-write transaction in WAL would otherwise get
            # SQLITE_BUSY; plain reads take no write lock.
            read_only = conn.get_execution_options().get("lightflow_read_only", False)
            conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

        return engine

    @contextmanager
    def _tx(self, *, read_only: bool = False, ensure: bool = True) -> Iterator[Any]:
        sa = self._sa
        if ensure and not read_only:
            self._ensure()
        try:
            with self._engine.connect() as conn:
                if read_only:
                    conn = conn.execution_options(lightflow_read_only=True)
                with conn.begin():
                    yield conn
        except sa.exc.OperationalError as exc:
            raise StorageError(
                "LA-STORAGE-UNAVAILABLE", f"flow store {self!r} failed: {exc.orig or exc}"
            ) from exc
        except sa.exc.SQLAlchemyError as exc:
            raise StorageError("LA-STORAGE", f"flow store {self!r} failed: {exc}") from exc

    def _upsert(self, conn: Any, table: Any, keys: dict[str, Any], values: dict[str, Any]) -> None:
        name = self._engine.dialect.name
        row = {**keys, **values}
        if name in ("sqlite", "postgresql"):
            if name == "sqlite":
                from sqlalchemy.dialects.sqlite import insert as sqlite_insert

                stmt: Any = sqlite_insert(table).values(**row)
            else:
                from sqlalchemy.dialects.postgresql import insert as pg_insert

                stmt = pg_insert(table).values(**row)
            conn.execute(stmt.on_conflict_do_update(index_elements=list(keys), set_=values))
            return
        cond = self._sa.and_(*(table.c[k] == v for k, v in keys.items()))
        conn.execute(table.delete().where(cond))
        conn.execute(table.insert().values(**row))

    def close(self) -> None:
        """Release the connection pool."""
        self._engine.dispose()

    # -- the store contract --------------------------------------------------

    def _run_row(self, conn: Any, run_id: str) -> Any:
        runs = self._runs
        # FOR UPDATE (PostgreSQL): a claim and a fenced write on one run serialize.
        query = self._sa.select(runs.c.epoch, runs.c.cancel_requested).where(
            runs.c.run_id == run_id
        )
        return conn.execute(query.with_for_update()).first()

    def _check_epoch(self, conn: Any, run_id: str, epoch: int | None) -> Any:
        row = self._run_row(conn, run_id)
        if epoch is not None and (row is None or row[0] != epoch):
            raise fenced_out(run_id, epoch, None if row is None else row[0])
        return row

    def save_header(self, run_id: str, header: dict[str, Any], *, epoch: int | None = None) -> None:
        """Write (replace) the run's header."""
        check_run_id(run_id)
        values = {
            "status": str(header.get("status") or "pending"),
            "updated_at": float(header.get("updated_at") or time.time()),
            "header": json.dumps(header, ensure_ascii=False, sort_keys=True),
        }
        with self._tx() as conn:
            if epoch is not None:
                self._check_epoch(conn, run_id, epoch)
            self._upsert(conn, self._runs, {"run_id": run_id}, values)

    def claim_run(self, run_id: str) -> int:
        """Bump and return the run's epoch (the run's header must exist)."""
        check_run_id(run_id)
        runs = self._runs
        with self._tx() as conn:
            row = self._run_row(conn, run_id)
            if row is None:
                raise StorageError("LA-STORAGE", f"cannot claim run {run_id!r}: it has no header")
            epoch = int(row[0] or 0) + 1
            conn.execute(runs.update().where(runs.c.run_id == run_id).values(epoch=epoch))
        return epoch

    def commit_step(self, run_id: str, step: dict[str, Any], *, epoch: int | None = None) -> bool:
        """Durably record one step's result (one upsert, one transaction).

        Returns whether a cancel is requested for the run, read in the same transaction.
        """
        check_run_id(run_id)
        name = step["name"]
        if self._fault:
            self._fault("before_commit", run_id, name)
        values = {"updated_at": time.time(), "record": json.dumps(step, ensure_ascii=False)}
        with self._tx() as conn:
            row = self._check_epoch(conn, run_id, epoch)
            self._upsert(conn, self._steps, {"run_id": run_id, "name": name}, values)
            if self._fault:
                self._fault("inside_commit", run_id, name)
        if self._fault:
            self._fault("after_commit", run_id, name)
        return bool(row is not None and row[1])

    def set_approval(
        self, run_id: str, step: str, decision: dict[str, Any], *, exclusive: bool = False
    ) -> bool:
        """Persist a decision for ``step`` (with ``exclusive``, only when it has none)."""
        check_run_id(run_id)
        keys = {"run_id": run_id, "step": step}
        text = json.dumps(decision, ensure_ascii=False)
        if exclusive:
            try:  # the primary key makes the first insert win
                with self._tx() as conn:
                    conn.execute(self._approvals.insert().values(**keys, decision=text))
            except StorageError as exc:
                if isinstance(exc.__cause__, self._sa.exc.IntegrityError):
                    return False
                raise
            return True
        with self._tx() as conn:
            self._upsert(conn, self._approvals, keys, {"decision": text})
        return True

    def clear_approvals(self, run_id: str, steps: list[str]) -> None:
        """Forget the decisions of ``steps``."""
        if not steps:
            return
        table = self._approvals
        with self._tx() as conn:
            conn.execute(table.delete().where(table.c.run_id == run_id, table.c.step.in_(steps)))

    def _set_cancel(self, run_id: str, value: bool) -> None:
        table = self._runs
        with self._tx() as conn:
            conn.execute(
                table.update().where(table.c.run_id == run_id).values(cancel_requested=value)
            )

    def request_cancel(self, run_id: str, reason: str | None = None) -> None:
        """Ask whoever runs ``run_id`` to stop before its next step."""
        self._set_cancel(check_run_id(run_id), True)

    def clear_cancel(self, run_id: str) -> None:
        """Withdraw a cancel request."""
        self._set_cancel(check_run_id(run_id), False)

    def cancel_requested(self, run_id: str) -> bool:
        """Whether a cancel was requested for ``run_id``."""
        table = self._runs
        if not self._readable():
            return False
        with self._tx(read_only=True) as conn:
            row = conn.execute(
                self._sa.select(table.c.cancel_requested).where(table.c.run_id == run_id)
            ).first()
        return bool(row and row[0])

    def _decode(self, text: str, where: str) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise StorageError(
                "LA-STORAGE-CORRUPT", f"{where} is not valid JSON: {exc}", details={"where": where}
            ) from exc
        return data

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The assembled record, or ``None`` when there is no such run."""
        check_run_id(run_id)
        sa, runs, steps, approvals = self._sa, self._runs, self._steps, self._approvals
        if not self._readable():
            return None
        with self._tx(read_only=True) as conn:
            row = conn.execute(
                sa.select(runs.c.header, runs.c.cancel_requested).where(runs.c.run_id == run_id)
            ).first()
            if row is None:
                return None
            step_rows = conn.execute(
                sa.select(steps.c.name, steps.c.record).where(steps.c.run_id == run_id)
            ).all()
            approval_rows = conn.execute(
                sa.select(approvals.c.step, approvals.c.decision).where(
                    approvals.c.run_id == run_id
                )
            ).all()
        header = self._decode(row[0], f"run {run_id} header")
        step_map = {n: self._decode(r, f"run {run_id} step {n}") for n, r in step_rows}
        approval_map = {s: self._decode(d, f"run {run_id} approval {s}") for s, d in approval_rows}
        return assemble_record(header, step_map, approval_map, bool(row[1]))

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run's header, most recently updated first."""
        runs = self._runs
        if not self._readable():
            return []
        with self._tx(read_only=True) as conn:
            rows = conn.execute(
                self._sa.select(runs.c.run_id, runs.c.header).order_by(runs.c.updated_at.desc())
            ).all()
        return [self._decode(h, f"run {rid} header") for rid, h in rows]

    def save_run(self, run_id: str, record: dict[str, Any]) -> None:
        """Write a whole record (the seeds' API): header, steps and approvals."""
        header = {
            k: v for k, v in record.items() if k not in ("steps", "approvals", "cancel_requested")
        }
        header.setdefault("run_id", run_id)
        self.save_header(run_id, header)
        for step in record.get("steps") or ():
            self.commit_step(run_id, step)
        for name, decision in (record.get("approvals") or {}).items():
            self.set_approval(run_id, name, decision)
