"""The read side of the task-graph store: runs, tasks, attempts, events, artifacts."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from lightagent_dag.errors import DAGError
from lightagent_dag.records import ArtifactManifest, DAGEvent, DAGRun, DAGTask, TaskAttempt
from lightagent_dag.sql.common import lock_events
from lightagent_dag.sql.rows import loads, row_to_event, row_to_manifest, row_to_run, row_to_task
from lightagent_dag.sql.transactions import StoreTransactions
from lightagent_dag.states import DAGAttemptStatus

__all__ = ["StoreReads"]


class StoreReads(StoreTransactions):
    """Read methods shared by the SQL stores (each read is one short transaction)."""

    def get_run(self, run_id: str) -> DAGRun | None:
        """The run, or None."""
        row = self.transaction(
            lambda c: c.execute(
                self.q("SELECT * FROM dag_runs WHERE run_id=:r"), {"r": run_id}
            ).first(),
            read=True,
        )
        return None if row is None else row_to_run(row)

    def require_run(self, run_id: str) -> DAGRun:
        """The run, or ``LA-DAG-NOT-FOUND``."""
        run = self.get_run(run_id)
        if run is None:
            raise DAGError("LA-DAG-NOT-FOUND", f"no LightDAG run {run_id!r}")
        return run

    def list_runs(self, *, limit: int = 100) -> list[DAGRun]:
        """The most recently updated runs first."""
        rows = self.transaction(
            lambda c: c.execute(
                self.q("SELECT * FROM dag_runs ORDER BY updated_at DESC LIMIT :n"),
                {"n": int(limit)},
            ).all(),
            read=True,
        )
        return [row_to_run(r) for r in rows]

    def _deps(self, conn: sa.Connection, run_id: str) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        rows = conn.execute(
            self.q(
                "SELECT task_id, depends_on FROM dag_dependencies WHERE run_id=:r ORDER BY depends_on"
            ),
            {"r": run_id},
        )
        for task_id, dep in rows:
            out.setdefault(task_id, []).append(dep)
        return {k: tuple(v) for k, v in out.items()}

    def list_tasks(self, run_id: str) -> list[DAGTask]:
        """Every task of the run, in insertion order."""

        def read(conn: sa.Connection) -> list[DAGTask]:
            deps = self._deps(conn, run_id)
            rows = conn.execute(
                self.q("SELECT * FROM dag_tasks WHERE run_id=:r ORDER BY seq"), {"r": run_id}
            ).all()
            return [row_to_task(r, deps.get(r._mapping["task_id"], ())) for r in rows]

        return self.transaction(read, read=True)

    def get_task(self, run_id: str, task_id: str) -> DAGTask | None:
        """One task, or None."""

        def read(conn: sa.Connection) -> DAGTask | None:
            row = conn.execute(
                self.q("SELECT * FROM dag_tasks WHERE run_id=:r AND task_id=:t"),
                {"r": run_id, "t": task_id},
            ).first()
            if row is None:
                return None
            deps = conn.execute(
                self.q(
                    "SELECT depends_on FROM dag_dependencies WHERE run_id=:r AND task_id=:t ORDER BY depends_on"
                ),
                {"r": run_id, "t": task_id},
            ).scalars()
            return row_to_task(row, tuple(deps))

        return self.transaction(read, read=True)

    def attempts(self, run_id: str, task_id: str | None = None) -> list[TaskAttempt]:
        """Attempts of a run (or of one task), oldest first."""
        sql = (
            "SELECT * FROM dag_attempts WHERE run_id=:r"
            + (" AND task_id=:t" if task_id else "")
            + " ORDER BY created_at, fence"
        )
        rows = self.transaction(
            lambda c: c.execute(self.q(sql), {"r": run_id, "t": task_id}).all(), read=True
        )
        return [
            TaskAttempt(
                attempt_id=m["attempt_id"],
                run_id=m["run_id"],
                task_id=m["task_id"],
                fence=int(m["fence"]),
                worker_id=m["worker_id"],
                status=DAGAttemptStatus(m["status"]),
                error=loads(m["error"]),
                created_at=float(m["created_at"]),
            )
            for m in (r._mapping for r in rows)
        ]

    def events(self, run_id: str, *, after: int = 0, limit: int = 100) -> list[DAGEvent]:
        """Events of the run with ``event_id > after``, oldest first.

        Ids are read in commit order: a page never holds an id while a smaller one is
        still uncommitted, so ``after=<last id seen>`` never skips one.
        """

        def read(conn: sa.Connection) -> list[Any]:
            lock_events(self, conn, run_id)
            return list(
                conn.execute(
                    self.q(
                        "SELECT * FROM dag_events WHERE run_id=:r AND event_id>:a ORDER BY event_id LIMIT :n"
                    ),
                    {"r": run_id, "a": int(after), "n": int(limit)},
                ).all()
            )

        return [row_to_event(r) for r in self.transaction(read, read=True)]

    def last_event_id(self, run_id: str) -> int:
        """The id of the run's latest event (0 when none); no smaller id commits after it."""

        def read(conn: sa.Connection) -> int:
            lock_events(self, conn, run_id)
            return int(
                conn.execute(
                    self.q("SELECT COALESCE(MAX(event_id), 0) FROM dag_events WHERE run_id=:r"),
                    {"r": run_id},
                ).scalar_one()
            )

        return self.transaction(read, read=True)

    def published_artifacts(self, run_id: str) -> dict[str, ArtifactManifest]:
        """The published artifact of each verified task."""
        rows = self.transaction(
            lambda c: c.execute(
                self.q(
                    "SELECT a.* FROM dag_published p JOIN dag_artifacts a ON a.artifact_id=p.artifact_id WHERE p.run_id=:r"
                ),
                {"r": run_id},
            ).all(),
            read=True,
        )
        return {r._mapping["task_id"]: row_to_manifest(r) for r in rows}

    def publication_counts(self, run_id: str) -> dict[str, int]:
        """How many artifacts are in state ``published`` per task (exactly one is the invariant)."""
        rows = self.transaction(
            lambda c: c.execute(
                self.q(
                    "SELECT task_id, COUNT(*) FROM dag_artifacts WHERE run_id=:r AND state='published' GROUP BY task_id"
                ),
                {"r": run_id},
            ).all(),
            read=True,
        )
        return {t: int(n) for t, n in rows}
