"""Writer turns on a SQLite store: one transaction at a time, handed over without polling.

Every transaction of the SQLite store starts with ``BEGIN IMMEDIATE``, so writers take
turns anyway. Left to SQLite, a writer that finds the database locked sleeps in its busy
handler (1, 2, 5, 10 … 100 ms) and retries; with several threads or worker processes on
one file those sleeps, not the work, set the pace. Here a writer waits on a thread lock
(threads of this process) and then on an ``flock`` of a file next to the database (other
processes): the kernel wakes the next writer as soon as the previous one unlocks, and a
process that dies releases its turn. Where ``flock`` does not exist, the thread lock
alone still orders the threads of one process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["WriterTurns"]


class WriterTurns:
    """One writer at a time on a SQLite file, across the threads and processes of one host."""

    def __init__(self, database: str) -> None:
        self.path = f"{database}-turns"
        self._pid = -1
        self._lock = threading.RLock()
        self._depth = 0  # turns held by the thread holding the lock (a nested one re-enters)
        self._fd: int | None = None

    def _reset_after_fork(self) -> None:
        # A forked child must not share the parent's open lock file (one file
        # description: both would hold the turn) nor a thread lock taken at the fork.
        self._pid = os.getpid()
        self._lock = threading.RLock()
        self._depth = 0
        self._fd = None

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Hold the writer turn for the body (a transaction)."""
        if self._pid != os.getpid():
            self._reset_after_fork()
        with self._lock:
            fd = self._file() if self._depth == 0 else None
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def _file(self) -> int | None:
        if fcntl is None:
            return None
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:
                return None  # a read-only directory: SQLite's own locking still holds
        return self._fd

    def close(self) -> None:
        """Close the lock file (the next turn opens it again)."""
        if self._fd is not None and self._pid == os.getpid():
            os.close(self._fd)
        self._fd = None
