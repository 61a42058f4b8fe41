"""The agent's log (``debug=`` / ``log_level=`` / ``log_file=``), written off the caller's thread.

A log line is written to ``log_file`` by one background thread per file: a run on the event
loop only puts the record on a queue, so a slow disk never stalls other runs. Lines are
redacted (a log file is persisted too) on that thread, before they are written. A run
returns only once its lines are in the file (:func:`drain`; :func:`adrain` waits on a
kept thread, off the loop).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from logging.handlers import QueueHandler, QueueListener

__all__ = ["QueuedFileHandler", "adrain", "agent_logger", "drain"]


class QueuedFileHandler(QueueHandler):
    """Queues records for a background thread that appends them, redacted, to ``path``.

    The thread and the file start with the first record (constructing writes nothing);
    :meth:`flush` waits until every record queued before it is written, :meth:`close` (also
    run by ``logging.shutdown`` at exit) writes what is queued and stops the thread.
    """

    def __init__(self, path: str) -> None:
        super().__init__(queue.Queue())
        self.baseFilename = os.path.abspath(path)
        self._lock_start = threading.Lock()
        self._listener: QueueListener | None = None
        self._file: logging.FileHandler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        """Queue ``record`` (starting the writer thread on the first one)."""
        if self._listener is None:
            self._start()
        super().emit(record)

    def _start(self) -> None:
        with self._lock_start:
            if self._listener is not None:
                return
            from lightagent.events.log_redaction import RedactingFilter

            target = logging.FileHandler(self.baseFilename, delay=True)
            target.addFilter(_reached)  # first: a flush's marker is never written
            target.addFilter(RedactingFilter())
            listener = QueueListener(self.queue, target, respect_handler_level=False)
            listener.start()
            self._file, self._listener = target, listener

    def flush(self) -> None:
        """Block until every record queued before this call is in the file (off the event loop).

        A marker record goes through the queue behind them; the writer thread sets its
        event instead of writing it. Records queued later by other runs are not waited for.
        """
        reached = threading.Event()
        with self._lock_start:  # close() cannot stop the thread between the put and the wait
            thread = getattr(self._listener, "_thread", None)
            if thread is None or not thread.is_alive():  # never started, closed, or a forked child
                return
            marker = logging.makeLogRecord({"msg": "", "levelno": logging.CRITICAL})
            marker.lightagent_flush = reached
            self.queue.put_nowait(marker)
        reached.wait()

    def close(self) -> None:
        """Write what is queued, stop the writer thread and close the file."""
        with self._lock_start:
            listener, self._listener = self._listener, None
            target, self._file = self._file, None
        if listener is not None:
            listener.stop()
        if target is not None:
            target.close()
        super().close()


def agent_logger(name: str, level: str, log_file: str | None, debug: bool) -> logging.Logger:
    """The logger ``lightagent.agent.<name>``, with a :class:`QueuedFileHandler` for ``log_file``."""
    logger = logging.getLogger(f"lightagent.agent.{name}")
    logger.setLevel(logging.DEBUG if debug else getattr(logging, str(level).upper(), logging.INFO))
    if log_file:
        path = os.path.abspath(log_file)
        if not any(getattr(h, "baseFilename", None) == path for h in logger.handlers):
            logger.addHandler(QueuedFileHandler(path))
    return logger


def _reached(record: logging.LogRecord) -> bool:
    """The writer's filter: a flush marker sets its event and is dropped."""
    event = getattr(record, "lightagent_flush", None)
    if event is None:
        return True
    event.set()
    return False


def drain(logger: logging.Logger) -> None:
    """Wait until what ``logger``'s ``log_file`` handlers were given is written (blocking)."""
    for handler in logger.handlers:
        if isinstance(handler, QueuedFileHandler):
            handler.flush()


async def adrain(logger: logging.Logger) -> None:
    """:func:`drain` from the event loop: the wait runs on a kept thread."""
    if any(isinstance(h, QueuedFileHandler) for h in logger.handlers):
        from lightagent.blocking import run_blocking

        await run_blocking(drain, logger)
