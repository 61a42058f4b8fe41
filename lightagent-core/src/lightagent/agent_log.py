"""The agent's log (``debug=`` / ``log_level=`` / ``log_file=``), written off the caller's thread.

A log line is written to ``log_file`` by one background thread per file: a run on the event
loop only puts the record on a queue, so a slow disk never stalls other runs. Lines are
redacted (a log file is persisted too) on that thread, before they are written.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from logging.handlers import QueueHandler, QueueListener

__all__ = ["QueuedFileHandler", "agent_logger"]


class QueuedFileHandler(QueueHandler):
    """Queues records for a background thread that appends them, redacted, to ``path``.

    The thread and the file start with the first record (constructing writes nothing);
    :meth:`flush` waits until every queued record is written, :meth:`close` (also run by
    ``logging.shutdown`` at exit) writes what is queued and stops the thread.
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
            target.addFilter(RedactingFilter())
            listener = QueueListener(self.queue, target, respect_handler_level=False)
            listener.start()
            self._file, self._listener = target, listener

    def flush(self) -> None:
        """Block until every record queued so far is in the file (call it off the event loop)."""
        listener = self._listener
        thread = getattr(listener, "_thread", None)
        if thread is not None and thread.is_alive():
            self.queue.join()  # type: ignore[attr-defined]

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
