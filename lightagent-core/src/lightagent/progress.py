"""A live progress line for long work a person watches, quiet when nobody does.

:class:`ProgressLine` draws one line with ``rich`` (the optional ``progress`` extra)
when the stream is a terminal, falls back to a plain carriage-return line when
``rich`` is missing, and prints nothing at all when the stream is not a TTY (a
pipe, a file, CI logs), so scripted output stays clean.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import IO, Any

__all__ = ["ProgressLine", "progress_enabled"]

_ENV = "LIGHTAGENT_PROGRESS"


def progress_enabled(stream: IO[str] | None = None, enabled: bool | None = None) -> bool:
    """Whether to draw: ``enabled`` if given, else ``LIGHTAGENT_PROGRESS`` (0/1), else ``stream.isatty()``."""
    if enabled is not None:
        return enabled
    env = os.environ.get(_ENV)
    if env in ("0", "1"):
        return env == "1"
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


class ProgressLine:
    """``with ProgressLine("eval", total=10) as p: p.advance(note="case 1")``.

    ``total`` may be None (unknown); :meth:`update` sets absolute counts. Nothing is
    written when :func:`progress_enabled` says no.
    """

    def __init__(
        self,
        label: str,
        *,
        total: int | None = None,
        stream: IO[str] | None = None,
        enabled: bool | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.completed = 0
        self.note = ""
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = progress_enabled(self.stream, enabled)
        self._rich: Any = None
        self._task: Any = None
        self._started = time.monotonic()
        self._plain_width = 0

    def __enter__(self) -> ProgressLine:
        if not self.enabled:
            return self
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )
        except ImportError:  # the `progress` extra is not installed: a plain line
            return self
        console = Console(file=self.stream, force_terminal=True)
        self._rich = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[note]}"),
            console=console,
            transient=False,
        )
        self._rich.start()
        self._task = self._rich.add_task(self.label, total=self.total, note="")
        return self

    def update(
        self, *, completed: int | None = None, total: int | None = None, note: str | None = None
    ) -> None:
        """Set the absolute counts and the note shown after the bar."""
        if completed is not None:
            self.completed = completed
        if total is not None:
            self.total = total
        if note is not None:
            self.note = note
        self._draw()

    def advance(self, step: int = 1, *, note: str | None = None) -> None:
        """Count ``step`` more items done."""
        self.update(completed=self.completed + step, note=note)

    def _draw(self) -> None:
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.update(
                self._task, completed=self.completed, total=self.total, note=self.note
            )
            return
        total = "?" if self.total is None else str(self.total)
        elapsed = time.monotonic() - self._started
        line = f"{self.label}: {self.completed}/{total} {elapsed:5.1f}s {self.note}"
        pad = max(0, self._plain_width - len(line))
        self._plain_width = len(line)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.stop()
            self._rich = None
        elif self._plain_width:
            self.stream.write("\n")
            self.stream.flush()
