"""Waking idle workers on PostgreSQL: ``LISTEN`` for commits that made tasks claimable.

A transaction that readies tasks (a new run, dependents woken by a publication, a blocker
resolved, a resumed run, a retry due at once) names their run on
:data:`~lightagent_dag.sql.common.READY_CHANNEL` (``pg_notify``, delivered at its commit).
An idle worker pool waits on :class:`ReadyListener` instead of sleeping out its poll
interval, so new work starts at once on every host, and idle pools may poll rarely (the
poll stays, for what no commit announces: retries that come due and leases that expire).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lightagent_dag.sql.common import READY_CHANNEL

if TYPE_CHECKING:
    from lightagent_dag.sql.store import SqlTaskGraphStore

__all__ = ["ReadyListener"]

log = logging.getLogger("lightagent.dag")

# How long one wait for notifications lasts before the thread checks whether to stop.
_WAIT_SECONDS = 0.5


class ReadyListener:
    """A daemon thread holding a ``LISTEN`` connection; calls ``on_ready(run_id)`` per notification.

    A lost connection is opened again (after a pause that doubles up to 5 s); while it is
    down, the pool's own polling still finds the work.
    """

    def __init__(self, store: SqlTaskGraphStore, on_ready: Callable[[str], None]) -> None:
        self._store = store
        self._on_ready = on_ready
        self._stop = threading.Event()
        self._conn: Any = None
        self._thread = threading.Thread(target=self._run, name="lightagent-dag-listen", daemon=True)
        #: Set once the first ``LISTEN`` is in place (tests wait for it).
        self.listening = threading.Event()

    def start(self) -> ReadyListener:
        """Start listening (returns self)."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening; the thread ends within its next wait."""
        self._stop.set()

    def _connect(self) -> Any:
        engine = self._store.engine
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        conn = engine.dialect.loaded_dbapi.connect(*args, **kwargs, autocommit=True)
        conn.execute(f"LISTEN {READY_CHANNEL}")
        return conn

    def _run(self) -> None:
        pause = 0.1
        while not self._stop.is_set():
            try:
                conn = self._connect()
            except Exception as exc:  # the database is away: polling carries on meanwhile
                log.debug("dag listener: cannot connect: %s", exc)
                self._stop.wait(pause)
                pause = min(pause * 2, 5.0)
                continue
            pause = 0.1
            self.listening.set()
            try:
                while not self._stop.is_set():
                    for note in conn.notifies(timeout=_WAIT_SECONDS):
                        self._deliver(note.payload)
            except Exception as exc:
                log.debug("dag listener: connection lost: %s", exc)
            finally:
                with contextlib.suppress(Exception):
                    conn.close()

    def _deliver(self, run_id: str) -> None:
        try:
            self._on_ready(run_id)
        except Exception:  # a closed loop or a bug in a callback must not end the listener
            log.debug("dag listener: on_ready failed", exc_info=True)
