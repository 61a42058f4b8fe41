"""SqlTaskGraphStore: runs, tasks, attempts, leases and fencing in one SQL database.

Every state change is one transaction. Every write made on behalf of an attempt
carries the attempt's fencing token in its ``WHERE`` clause and checks the row count,
so a worker whose lease was taken over changes nothing (:class:`DAGFencedError`).
Lease times come from the database clock, never from the worker's.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from lightagent.errors import StorageError

from lightagent_dag.errors import DAGError, DAGFencedError
from lightagent_dag.records import ArtifactManifest, Claim, ClaimRequest, DAGRun, DAGTask
from lightagent_dag.specs import DAGConfig, TaskSpec, canonical_digest
from lightagent_dag.sql import transitions as tx
from lightagent_dag.sql.reads import StoreReads
from lightagent_dag.sql.rows import (
    dumps,
    new_attempt_id,
    row_to_run,
)

__all__ = ["SqlTaskGraphStore", "SqliteTaskGraphStore", "TaskGraphStore", "new_attempt_id"]

T = TypeVar("T")

# Fewer new tasks than this never make the statistics misleading enough to matter.
_ANALYZE_MIN_ROWS = 64


class SqlTaskGraphStore(StoreReads):
    """The task-graph store on SQLAlchemy 2.x: ``sqlite:///file`` or ``postgresql+psycopg://…``.

    With PostgreSQL any number of worker processes on any number of hosts share one
    store; claims use ``SELECT … FOR UPDATE SKIP LOCKED``. With SQLite every
    transaction starts with ``BEGIN IMMEDIATE`` on a WAL database (one host).
    """

    @classmethod
    def open_existing(cls, store: str | os.PathLike[str]) -> SqlTaskGraphStore:
        """Open a store that must already exist, for reading: nothing is created.

        A missing SQLite file, a database without the task-graph tables, or a folder in the
        way is ``LA-STORAGE-NOT-FOUND`` ("no such store"); ``lightagent dag status`` uses it.
        """
        text = os.fspath(store)
        url = text if "://" in text else f"sqlite:///{Path(text).absolute()}"
        try:
            parsed = sa.make_url(url)
        except sa.exc.ArgumentError as exc:
            raise StorageError(
                "LA-CONFIG", f"invalid task-graph store URL {text!r}: {exc}"
            ) from exc
        if parsed.get_backend_name() == "sqlite":
            file = Path(parsed.database or "")
            if not parsed.database or not file.is_file():
                raise _no_such_store(
                    text, "does not exist" if not file.exists() else "is not a file"
                )
            if not _sqlite_has_table(file, "dag_meta"):
                # Checked read-only first: opening the engine would switch a foreign file to WAL.
                raise _no_such_store(text, "holds no task-graph store (no dag_meta table)")
        opened = cls(url, create=False)
        try:
            present = opened.transaction(lambda c: sa.inspect(c).has_table("dag_meta"))
        except BaseException:
            opened.close()
            raise
        if not present:
            opened.close()
            raise _no_such_store(text, "holds no task-graph store (no dag_meta table)")
        return opened

    def __enter__(self) -> SqlTaskGraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs -----------------------------------------------------------------------

    def create_run(
        self,
        run_id: str,
        tasks: Sequence[TaskSpec],
        *,
        tenant_id: str,
        project_id: str,
        user_id: str,
        context: dict[str, Any],
        root_task_ids: Sequence[str],
        config: DAGConfig,
    ) -> tuple[DAGRun, bool]:
        """Insert a run and its tasks; the same id with the same content returns the stored run."""
        digest = canonical_digest(
            {
                "tasks": [t.digest() for t in tasks],
                "roots": list(root_task_ids),
                "tenant": tenant_id,
                "project": project_id,
                "config": config.digest(),
            }
        )

        def create(conn: sa.Connection) -> tuple[DAGRun, bool]:
            row = conn.execute(
                self.q("SELECT * FROM dag_runs WHERE run_id=:r"), {"r": run_id}
            ).first()
            if row is not None:
                if row._mapping["digest"] != digest:
                    raise DAGError(
                        "LA-DAG-IDEMPOTENCY-CONFLICT",
                        f"run {run_id!r} already exists with different tasks or identity",
                    )
                return row_to_run(row), False
            edges = sum(len(t.depends_on) for t in tasks)
            conn.execute(
                self.q(
                    "INSERT INTO dag_runs(run_id, status, tenant_id, project_id, user_id, root_task_ids,"
                    " graph_revision, config, context, digest, max_attempts, task_count, edge_count,"
                    " reason, created_at, updated_at) VALUES (:r, 'running', :tenant, :project, :user,"
                    " :roots, 1, :config, :ctx, :digest, :max_attempts, :n, :e, NULL, {now}, {now})"
                ),
                {
                    "r": run_id,
                    "tenant": tenant_id,
                    "project": project_id,
                    "user": user_id,
                    "roots": dumps(list(root_task_ids)),
                    "config": dumps(config.to_dict()),
                    "ctx": dumps(context),
                    "digest": digest,
                    "max_attempts": config.max_attempts_per_task,
                    "n": len(tasks),
                    "e": edges,
                },
            )
            tx.insert_tasks(self, conn, run_id, tasks, depth=0, first_seq=0)
            tx.event(
                self,
                conn,
                run_id,
                "dag.run.created",
                {"tasks": len(tasks), "roots": list(root_task_ids)},
            )
            return row_to_run(
                conn.execute(self.q("SELECT * FROM dag_runs WHERE run_id=:r"), {"r": run_id}).one()
            ), True

        try:
            created = self.transaction(create)
        except StorageError as exc:
            if not isinstance(exc.__cause__, sa.exc.IntegrityError):
                raise
            created = self.transaction(create)  # a concurrent create won the race
        if created[1]:
            self.refresh_statistics(len(tasks))
        return created

    def refresh_statistics(self, added: int) -> None:
        """On PostgreSQL, ``ANALYZE`` the task tables when ``added`` rows are a large part of them.

        The planner picks the hot statements' indexes from table statistics. Left to
        autovacuum (a pass a minute at most), a run that just made ``dag_tasks`` several
        times larger is planned from statistics of a much smaller table: its fenced
        updates then scan the claim index row by row, and a whole small run can finish
        before the statistics catch up. Cheap next to the inserts it follows.
        """
        if not self.pg or added < _ANALYZE_MIN_ROWS:
            return

        def analyze(conn: sa.Connection) -> None:
            estimate = conn.execute(
                sa.text("SELECT reltuples FROM pg_class WHERE oid = 'dag_tasks'::regclass")
            ).scalar()
            if estimate is None or estimate < 0 or added * 4 > estimate:
                conn.execute(sa.text("ANALYZE dag_tasks, dag_dependencies"))

        try:
            self.transaction(analyze)
        except StorageError:
            pass  # statistics help the planner; the run stands without them

    def set_run_status(self, run_id: str, action: str, reason: str | None = None) -> DAGRun:
        """``pause``, ``resume`` or ``cancel`` a run (cancel fences out every running attempt)."""
        return self.transaction(lambda c: tx.set_run_status(self, c, run_id, action, reason))

    def append_event(
        self, run_id: str, type_: str, data: dict[str, Any], task_id: str | None = None
    ) -> None:
        """Append one event to a run's log (audit records and the like)."""
        self.transaction(lambda c: tx.event(self, c, run_id, type_, data, task_id))

    def reconcile(self, run_id: str | None = None) -> int:
        """Settle runs that are ``running`` with nothing left to do; returns how many were checked.

        Publications skip the run lock unless they may finish the run, so the last two
        finishing at once can leave it ``running``; idle workers call this to settle it.
        """
        sql = (
            "SELECT r.run_id FROM dag_runs r WHERE r.status='running'"
            + (" AND r.run_id=:run" if run_id is not None else "")
            + " AND NOT EXISTS (SELECT 1 FROM dag_tasks t WHERE t.run_id=r.run_id"
            " AND t.status IN ('ready','running','verifying','retry_wait')) LIMIT 50"
        )
        stalled = self.transaction(
            lambda c: c.execute(self.q(sql), {"run": run_id}).scalars().all()
        )
        for rid in stalled:
            self.transaction(functools.partial(tx.reconcile, self, run_id=rid))
        return len(stalled)

    def resolve_blocker(self, run_id: str, task_id: str, reason: str | None = None) -> DAGTask:
        """Make a blocked task ready again and the run running."""
        self.transaction(lambda c: tx.resolve_blocker(self, c, run_id, task_id, reason))
        return self.get_task(run_id, task_id)  # type: ignore[return-value]

    def supersede_task(
        self, run_id: str, task_id: str, replacement: TaskSpec, *, expected_graph_revision: int
    ) -> DAGRun:
        """Replace a task by another, if the graph is still at ``expected_graph_revision``."""
        return self.transaction(
            lambda c: tx.supersede(self, c, run_id, task_id, replacement, expected_graph_revision)
        )

    # -- claims, leases and attempt writes ---------------------------------------------

    def claim(
        self,
        worker_id: str,
        *,
        run_id: str | None = None,
        worker_keys: Sequence[str] | None = None,
        lease_seconds: float = 60.0,
    ) -> Claim | None:
        """Claim the best claimable task (ready, retry due, or lease expired) and take a lease on it."""
        for _ in range(16):
            result = self.transaction(
                lambda c: tx.claim(self, c, worker_id, run_id, worker_keys, lease_seconds)
            )
            if result is None:
                return None
            if isinstance(result, Claim):
                return result
            # The task has used all its attempts: fail it (run lock first), then look again.
            run, task, fence = result
            self.transaction(
                functools.partial(tx.fail_exhausted, self, run_id=run, task_id=task, fence=fence)
            )
        return None

    def renew(self, claim: Claim, lease_seconds: float) -> float:
        """Extend the attempt's lease; ``DAGFencedError`` if the task was taken over. Returns the new expiry."""
        return self._fenced(claim, "renew", lambda c: tx.renew(self, c, claim, lease_seconds))

    def stage_candidate(
        self,
        claim: Claim,
        manifest: ArtifactManifest,
        *,
        max_pending: int,
        blob: bytes | None = None,
    ) -> bool:
        """Record a staged candidate and move the task to ``verifying``.

        Returns False, writing nothing, while the run already has ``max_pending``
        verifications pending (the caller waits and tries again). ``blob``, the
        candidate's bytes for a :class:`SqlArtifactStore` on this database, is written in
        the same transaction.
        """
        try:
            return self._fenced(
                claim, "stage", lambda c: tx.stage(self, c, claim, manifest, max_pending, blob)
            )
        except tx.NoVerificationSlot:
            return False

    def publish(
        self,
        claim: Claim,
        manifest: ArtifactManifest,
        report: dict[str, Any],
        *,
        claim_next: ClaimRequest | None = None,
    ) -> Claim | None:
        """Publish the verified artifact, mark the task verified and wake its dependents.

        With ``claim_next``, the same transaction also claims the worker's next task
        (see :meth:`claim`; a lease takeover is left to a claim of its own) and returns
        it: one commit per task instead of two. Otherwise returns None.
        """

        def write(conn: sa.Connection) -> Claim | None:
            tx.publish(self, conn, claim, manifest, report)
            return self._claim_next(conn, claim_next)

        return self._fenced(claim, "publish", write)

    def publish_verified(
        self,
        claim: Claim,
        manifest: ArtifactManifest,
        report: dict[str, Any],
        *,
        claim_next: ClaimRequest | None = None,
        blob: bytes | None = None,
    ) -> Claim | None:
        """Stage and publish a candidate verified before staging (an inline verifier), in one transaction.

        ``claim_next`` as for :meth:`publish`; ``blob`` as for :meth:`stage_candidate`.
        """

        def write(conn: sa.Connection) -> Claim | None:
            tx.publish_inline(self, conn, claim, manifest, report, blob)
            return self._claim_next(conn, claim_next)

        return self._fenced(claim, "publish", write)

    def _claim_next(self, conn: sa.Connection, request: ClaimRequest | None) -> Claim | None:
        if request is None:
            return None
        got = tx.claim(
            self,
            conn,
            request.worker_id,
            request.run_id,
            request.worker_keys,
            request.lease_seconds,
            plain_only=True,
        )
        return got if isinstance(got, Claim) else None

    def reject(
        self,
        claim: Claim,
        error: dict[str, Any],
        *,
        outcome: str = "retry",
        backoff: float = 0.0,
        report: dict[str, Any] | None = None,
    ) -> DAGTask:
        """Record a failed attempt: ``outcome`` is ``retry`` (after ``backoff``), ``fail`` or ``block``."""
        self._fenced(
            claim, "reject", lambda c: tx.reject(self, c, claim, error, outcome, backoff, report)
        )
        return self.get_task(claim.run_id, claim.task_id)  # type: ignore[return-value]

    def block(self, claim: Claim, reason: str) -> None:
        """The worker reported a blocker: the task waits for ``resolve_blocker``."""
        self._fenced(
            claim,
            "block",
            lambda c: tx.reject(
                self,
                c,
                claim,
                {"code": "blocked", "message": reason},
                "block",
                0.0,
                None,
                blocker=reason,
            ),
        )

    def accept_decomposition(self, claim: Claim, proposal: Any, report: dict[str, Any]) -> DAGRun:
        """Insert a verified decomposition's tasks; the parent waits for them, then integrates."""
        return self._fenced(
            claim, "decompose", lambda c: tx.decompose(self, c, claim, proposal, report)
        )

    def _fenced(self, claim: Claim, operation: str, fn: Callable[[sa.Connection], T]) -> T:
        try:
            return self.transaction(fn)
        except DAGFencedError:
            self.fenced_rejections += 1
            try:
                self.transaction(
                    lambda c: tx.event(
                        self,
                        c,
                        claim.run_id,
                        "dag.attempt.fenced",
                        {
                            "attempt_id": claim.attempt_id,
                            "fence": claim.fence,
                            "operation": operation,
                            "worker_id": claim.worker_id,
                        },
                        claim.task_id,
                    )
                )
            except StorageError:
                pass  # the rejection itself stands; its audit event is best effort
            raise

    # -- scheduler lease ---------------------------------------------------------------

    def acquire_scheduler_lease(self, run_id: str, owner: str, lease_seconds: float) -> int:
        """Take the run's scheduler lease; returns its epoch, which only grows."""
        return self.transaction(
            lambda c: tx.acquire_scheduler(self, c, run_id, owner, lease_seconds)
        )

    def renew_scheduler_lease(
        self, run_id: str, owner: str, epoch: int, lease_seconds: float
    ) -> None:
        """Extend the scheduler lease; ``DAGFencedError`` if another scheduler took it."""

        def renew(conn: sa.Connection) -> None:
            n = conn.execute(
                self.q(
                    "UPDATE dag_scheduler_leases SET expires_at={now}+:ttl WHERE run_id=:r AND owner=:o AND epoch=:e"
                ),
                {"r": run_id, "o": owner, "e": epoch, "ttl": lease_seconds},
            ).rowcount
            if n != 1:
                raise DAGFencedError(run_id=run_id, fence=epoch, operation="renew_scheduler_lease")

        self.transaction(renew)

    def release_scheduler_lease(self, run_id: str, owner: str, epoch: int) -> None:
        """Give the lease up (the epoch stays, so the next holder's is larger)."""
        self.transaction(
            lambda c: c.execute(
                self.q(
                    "UPDATE dag_scheduler_leases SET owner=NULL, expires_at=NULL WHERE run_id=:r AND owner=:o AND epoch=:e"
                ),
                {"r": run_id, "o": owner, "e": epoch},
            )
        )


class SqliteTaskGraphStore(SqlTaskGraphStore):
    """The embedded default: ``SqlTaskGraphStore("sqlite:///<path>")`` on one WAL file (not ``:memory:``)."""

    def __init__(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        text = os.fspath(path)
        if text in ("", ":memory:"):
            raise StorageError(
                "LA-CONFIG",
                "SqliteTaskGraphStore needs a file path, not :memory: (leases must survive a restart)",
            )
        file = Path(text).absolute()
        file.parent.mkdir(parents=True, exist_ok=True)
        self.path = file
        super().__init__(f"sqlite:///{file}", **kwargs)


def _sqlite_has_table(file: Path, table: str) -> bool:
    import sqlite3

    try:
        # absolute(): a file URI cannot be relative, and sqlite:///dag.db names one in the cwd
        uri = f"{file.absolute().as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            row = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    except sqlite3.DatabaseError as exc:
        raise StorageError(
            "LA-STORAGE-NOT-FOUND",
            f"No such task-graph store: {file} is not a readable SQLite database ({exc}).",
            details={"store": str(file)},
        ) from exc
    return row is not None


def _no_such_store(store: str, why: str) -> StorageError:
    return StorageError(
        "LA-STORAGE-NOT-FOUND",
        f"No such task-graph store: {store} {why}.",
        hint="Check --store (a path or URL of a store a LightDAG run has written); reading never creates one.",
        details={"store": store},
    )


#: The seeds' name for the task-graph store contract; the SQL store is its implementation.
TaskGraphStore = SqlTaskGraphStore
