"""The JSONL session file format: framed lines with a sequence and a CRC32, and the
helpers that read tails, parse frames and write repaired copies durably."""

from __future__ import annotations

import json
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lightagent.errors import StorageError
from lightagent.events.model import SessionEvent
from lightagent.events.store import dumps_event

__all__ = [
    "IntegrityReport",
    "SalvageReport",
    "TornTail",
    "frame",
    "line_ok",
    "parse_line",
    "read_last_line",
    "seq_of",
    "write_durably",
]

_LINE = re.compile(rb'^\{"seq":(\d+),"crc":"([0-9a-f]{8})","event":')
_TAIL_CHUNK = 65536


@dataclass
class IntegrityReport:
    """The result of checking one session file."""

    session_id: str
    last_sequence: int
    torn_tail_at: int | None = None
    corrupt_at: int | None = None
    message: str = "ok"

    @property
    def ok(self) -> bool:
        """True when the file is intact."""
        return self.torn_tail_at is None and self.corrupt_at is None


@dataclass
class SalvageReport:
    """What :meth:`JsonlSessionStore.salvage` kept and dropped."""

    session_id: str
    path: Path
    kept: int
    first_bad_sequence: int | None
    dropped: list[dict[str, Any]] = field(default_factory=list)
    rejected_path: Path | None = None
    replaced: bool = False


def frame(event: SessionEvent) -> bytes:
    """One line: ``{"seq":N,"crc":"<crc32 of the event text>","event":<event>}``."""
    text = dumps_event(event).encode("utf-8")
    return b'{"seq":%d,"crc":"%08x","event":%s}\n' % (event.sequence, zlib.crc32(text), text)


def parse_line(line: bytes, expected_seq: int) -> tuple[SessionEvent | None, str | None]:
    """(event, None) for a good line, (None, reason) for a bad one."""
    match = _LINE.match(line)
    if match is None or not line.endswith(b"}\n"):
        return None, "unreadable frame"
    seq, crc = int(match.group(1)), match.group(2)
    body = line[match.end() : -2]
    if b"%08x" % zlib.crc32(body) != crc:
        return None, "checksum mismatch"
    if seq != expected_seq:
        return None, f"sequence {seq} where {expected_seq} was expected"
    try:
        event = SessionEvent.from_dict(json.loads(body))
    except (ValueError, StorageError) as exc:
        return None, f"undecodable event ({type(exc).__name__})"
    if event.sequence != seq:
        return None, "frame and event sequence differ"
    return event, None


class TornTail(Exception):
    """Internal signal: the last line is torn at ``sequence``."""

    def __init__(self, sequence: int) -> None:
        super().__init__(sequence)
        self.sequence = sequence


def seq_of(line: bytes | None) -> int | None:
    """The frame's sequence, or ``None`` when the frame prefix is unreadable."""
    if not line:
        return None
    match = _LINE.match(line)
    return int(match.group(1)) if match else None


def read_last_line(fd: int, end: int) -> tuple[bytes | None, int]:
    """The last line of the first ``end`` bytes (with its newline, if any) and its offset."""
    if end <= 0:
        return None, 0
    pos = end - 1  # the final byte may be the line's own newline: search before it
    line_start = 0
    while pos > 0:
        start = max(0, pos - _TAIL_CHUNK)
        idx = os.pread(fd, pos - start, start).rfind(b"\n")
        if idx != -1:
            line_start = start + idx + 1
            break
        pos = start
    return os.pread(fd, end - line_start, line_start), line_start


def line_ok(line: bytes | None) -> bool:
    """Whether ``line`` is a complete frame whose checksum and event are valid."""
    seq = seq_of(line)
    return seq is not None and line is not None and parse_line(line, seq)[0] is not None


def write_durably(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (tmp, fsync, rename, fsync the directory)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
