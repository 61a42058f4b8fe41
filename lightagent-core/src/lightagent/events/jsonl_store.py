"""``JsonlSessionStore``: one append-only JSONL file per session.

Each line is ``{"seq":N,"crc":"<crc32 hex of the event text>","event":{…}}``. Appends
take an exclusive ``flock`` on the file, check the expected sequence against the
file's real tail, write the batch with one ``write`` in append mode and ``fsync``
once: O(1) per event, the file is never rewritten. A line is torn only at the tail
(a crash mid-write); anything wrong earlier is corruption, raised with the sequence it
hit and a salvage path.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from lightagent.errors import StorageError
from lightagent.events.jsonl_format import (
    IntegrityReport,
    SalvageReport,
    TornTail,
    frame,
    line_ok,
    parse_line,
    read_last_line,
    seq_of,
    write_durably,
)
from lightagent.events.model import SessionEvent
from lightagent.events.store import (
    EventInput,
    SessionInfo,
    SessionStoreBase,
    info_from_first,
    path_error,
    validate_session_id,
)

__all__ = ["IntegrityReport", "JsonlSessionStore", "SalvageReport"]

log = logging.getLogger("lightagent.events")

#: Where a store built without arguments (``session_store="jsonl"``) keeps its files.
DEFAULT_DIRECTORY = ".lightagent/sessions"
_INDEX_EVERY = 512


class JsonlSessionStore(SessionStoreBase):
    """Sessions as ``<directory>/<session_id>.jsonl`` files.

    The folder is created on the first write, never by a read; its missing parents only
    with ``create_dirs=True`` (or for the default ``.lightagent/sessions``), otherwise
    ``LA-STORAGE-NOT-FOUND`` names the missing folder. ``fsync=False`` trades durability
    on power loss for speed (a process crash still
    loses nothing acknowledged). ``repair_torn_tail=True`` lets an append cut off a
    torn last line (an unacknowledged write) before writing; with ``False`` the append
    raises ``LA-STORAGE-CORRUPT`` instead.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] = DEFAULT_DIRECTORY,
        *,
        fsync: bool = True,
        repair_torn_tail: bool = True,
        create_dirs: bool | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.fsync = fsync
        self.repair_torn_tail = repair_torn_tail
        if create_dirs is None:  # only the built-in default location makes its parents
            create_dirs = self.directory == Path(DEFAULT_DIRECTORY)
        self.create_dirs = create_dirs
        self._dir_ready = False
        self._lock = threading.Lock()
        # path -> (inode, size, mtime_ns, last_seq): lets an append skip re-reading the
        # tail while nobody else touched the file (a rewrite of the same size changes mtime).
        self._tails: dict[Path, tuple[int, int, int, int]] = {}
        # path -> (inode, {sequence: byte offset}) every _INDEX_EVERY lines: cheap pages.
        self._index: dict[Path, tuple[int, dict[int, int]]] = {}
        self._failed: str | None = None

    # -- paths -----------------------------------------------------------------

    def path_for(self, session_id: str) -> Path:
        """The file that holds ``session_id``."""
        validate_session_id(session_id)
        return self.directory / (quote(session_id, safe="-_.=+@") + ".jsonl")

    # -- append ----------------------------------------------------------------

    def append(
        self,
        session_id: str,
        events: Iterable[EventInput],
        *,
        expected_sequence: int | None = None,
    ) -> list[SessionEvent]:
        """Append atomically under an exclusive file lock; one ``fsync`` per batch."""
        path = self.path_for(session_id)
        items = list(events)
        if self._failed:
            raise StorageError(
                "LA-STORAGE",
                f"The store is read-only after a failed fsync: {self._failed}",
                hint="Check the disk, then open a new JsonlSessionStore.",
            )
        with self._lock:
            if not self._dir_ready:
                self._make_directory()
            created = not path.exists()
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            except OSError as exc:
                raise path_error(exc, f"Cannot open session {session_id!r} for appending") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                last, size = self._tail_locked(fd, path, session_id)
                self._check_expected(session_id, expected_sequence, last)
                prepared = self._prepare(session_id, items, last)
                if not prepared:
                    return []
                data = b"".join(frame(e) for e in prepared)
                self._write_or_undo(fd, data, size, session_id)
                if self.fsync:
                    self._sync(fd, path if created else None)
                st = os.fstat(fd)
                self._tails[path] = (st.st_ino, st.st_size, st.st_mtime_ns, prepared[-1].sequence)
                return prepared
            finally:
                os.close(fd)  # closing releases the flock

    def _make_directory(self) -> None:
        """Create the store's folder on the first write (its parents only with ``create_dirs``)."""
        try:
            self.directory.mkdir(parents=self.create_dirs, exist_ok=True)
        except FileNotFoundError as exc:
            raise StorageError(
                "LA-STORAGE-NOT-FOUND",
                f"Cannot create the session folder {self.directory}: its parent"
                f" {self.directory.parent} does not exist.",
                hint="Create the parent folder, or pass create_dirs=True to create missing folders.",
                details={"path": str(self.directory), "missing_folder": str(self.directory.parent)},
            ) from exc
        except OSError as exc:
            raise path_error(exc, f"Cannot create the session folder {self.directory}") from exc
        if not self.directory.is_dir():
            raise StorageError(
                "LA-STORAGE",
                f"Cannot use {self.directory} as the session folder: a file is in the way.",
                hint="Move the file away or choose another folder.",
                details={"path": str(self.directory)},
            )
        self._dir_ready = True

    def exists(self) -> bool:
        """Whether the store's folder exists (reads never create it; the first write does)."""
        return self.directory.is_dir()

    def _write_all(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]

    def _write_or_undo(self, fd: int, data: bytes, size: int, session_id: str) -> None:
        """Write the batch; on a failed write cut what got through, so no part of it stays."""
        try:
            self._write_all(fd, data)
        except OSError as exc:
            # A short write (disk full, quota, file size limit) may have left whole lines
            # of an unacknowledged batch behind: a batch is all or nothing.
            try:
                os.ftruncate(fd, size)
            except OSError as undo:
                self._failed = f"{type(undo).__name__}: {undo}"
            raise StorageError(
                "LA-STORAGE",
                f"Writing to session {session_id!r} failed ({exc.strerror or exc});"
                " nothing of the batch was kept.",
                hint="Check the disk (space, quota, errors), then retry the append.",
                details={"session_id": session_id, "errno": exc.errno},
            ) from exc

    def _sync(self, fd: int, new_file: Path | None) -> None:
        try:
            os.fsync(fd)
            if new_file is not None:
                dir_fd = os.open(self.directory, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
        except OSError as exc:
            # After a failed fsync the page cache may claim data it lost: stop acking.
            self._failed = f"{type(exc).__name__}: {exc}"
            raise StorageError(
                "LA-STORAGE",
                f"fsync failed; the store is now read-only ({exc.strerror or exc}).",
                hint="Check the disk (space, errors), then open a new store.",
                details={"errno": exc.errno},
            ) from exc

    def _tail_locked(self, fd: int, path: Path, session_id: str) -> tuple[int, int]:
        """(last sequence, file size) of a locked file, cutting a torn tail if allowed."""
        st = os.fstat(fd)
        cached = self._tails.get(path)
        if cached and cached[:3] == (st.st_ino, st.st_size, st.st_mtime_ns):
            return cached[3], st.st_size
        if st.st_size == 0:
            return 0, 0
        last_line, start = read_last_line(fd, st.st_size)
        if line_ok(last_line):
            return seq_of(last_line) or 0, st.st_size
        prev_line, _ = read_last_line(fd, start) if start else (None, 0)
        prev_seq = (seq_of(prev_line) or 0) if prev_line is not None else 0
        if last_line is not None and last_line.endswith(b"\n"):
            # The whole line, newline included, reached the file: it was written (and
            # maybe acknowledged) in full, so a failed check is damage, not a crash mid-write.
            raise self._corrupt(
                session_id, prev_seq + 1, None, b"the last line is complete but fails its check"
            )
        # The last line is torn (no newline): the sequence is one after the line before it.
        good_end = start
        message = f"torn tail at sequence {prev_seq + 1} in session {session_id!r}"
        if not self.repair_torn_tail:
            raise StorageError(
                "LA-STORAGE-CORRUPT",
                f"Cannot append: {message}.",
                hint="Open the store with repair_torn_tail=True or call salvage(session_id).",
                details={"session_id": session_id, "torn_tail_at": prev_seq + 1},
            )
        log.warning(
            "%s: cutting %d bytes of an unacknowledged write", message, st.st_size - good_end
        )
        os.ftruncate(fd, good_end)
        return prev_seq, good_end

    # -- read ------------------------------------------------------------------

    def _scan(self, session_id: str, *, after: int = 0) -> Iterator[SessionEvent]:
        """Every valid event after ``after``; a bad complete line raises, a torn last one ends it."""
        path = self.path_for(session_id)
        try:
            handle = open(path, "rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise path_error(exc, f"Cannot read session {session_id!r}") from exc
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            inode = os.fstat(handle.fileno()).st_ino
            expected, offset = self._seek_near(handle, path, inode, after + 1)
            line_no = expected - 1  # in the intact prefix, line k holds sequence k
            marks: dict[int, int] = {}
            try:
                for line in handle:
                    line_no += 1
                    if expected % _INDEX_EVERY == 1:
                        marks[expected] = offset
                    offset += len(line)
                    if expected <= after:
                        # Cheap skip before ``after``: only the sequence and the newline are checked.
                        if seq_of(line) == expected and line.endswith(b"\n"):
                            expected += 1
                            continue
                    event, reason = parse_line(line, expected)
                    if event is not None:
                        expected += 1
                        yield event
                    elif line.endswith(b"\n"):
                        # A complete line is never a torn write: corruption, even the last one.
                        raise self._corrupt(session_id, expected, line_no, (reason or "?").encode())
                    else:
                        # No newline: the last line, cut short by a crash mid-write.
                        log.warning("torn tail at sequence %d in session %r", expected, session_id)
                        marks.pop(expected, None)
            finally:
                # Also when the reader stops early (a page): keep what this pass learned.
                self._remember(path, inode, marks)

    def _seek_near(self, handle: Any, path: Path, inode: int, target: int) -> tuple[int, int]:
        """Jump to the indexed line at or before sequence ``target``: (sequence, offset)."""
        known = self._index.get(path)
        if target > 1 and known is not None and known[0] == inode:
            best = max((seq for seq in known[1] if seq <= target), default=0)
            if best > 1:
                offset = known[1][best]
                handle.seek(offset)
                if seq_of(handle.readline()) == best:
                    handle.seek(offset)
                    return best, offset
                self._index.pop(path, None)  # stale (file replaced): forget it
        handle.seek(0)
        return 1, 0

    def _remember(self, path: Path, inode: int, marks: dict[int, int]) -> None:
        if not marks:
            return
        known = self._index.get(path)
        if known is None or known[0] != inode:
            self._index[path] = (inode, dict(marks))
        else:
            known[1].update(marks)

    def _corrupt(
        self, session_id: str, seq: int, line_no: int | None, reason: bytes
    ) -> StorageError:
        where = f"line {line_no}" if line_no is not None else "last line"
        return StorageError(
            "LA-STORAGE-CORRUPT",
            f"Session {session_id!r} is corrupt at sequence {seq} ({where}: {reason.decode()});"
            " nothing is appended until it is salvaged.",
            hint=f"Events before {seq} are intact; store.salvage({session_id!r}) writes a repaired copy.",
            details={
                "session_id": session_id,
                "sequence": seq,
                "line": line_no,
                "reason": reason.decode(),
                "path": str(self.path_for(session_id)),
                "salvage": f"salvage({session_id!r})",
            },
        )

    def events(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[SessionEvent]:
        """Events with ``sequence > after``, at most ``limit``; corruption raises."""
        self._check_page(after, limit)
        out: list[SessionEvent] = []
        if limit == 0:
            return out
        for event in self._scan(session_id, after=after):
            out.append(event)
            if limit is not None and len(out) >= limit:
                break
        return out

    def iter_events(
        self, session_id: str, *, after: int = 0, page_size: int = 1000
    ) -> Iterator[SessionEvent]:
        """Every event after ``after`` in one pass over the file."""
        return self._scan(session_id, after=after)

    def last_sequence(self, session_id: str) -> int:
        """The sequence of the last intact line (a torn tail does not count)."""
        return self.verify(session_id).last_sequence

    def verify(self, session_id: str) -> IntegrityReport:
        """Check every line; report a torn tail or the first corrupt sequence."""
        last = 0
        try:
            for event in self._scan_with_tail(session_id):
                last = event.sequence
        except TornTail as torn:
            return IntegrityReport(
                session_id,
                last,
                torn_tail_at=torn.sequence,
                message=f"torn tail at sequence {torn.sequence}",
            )
        except StorageError as exc:
            if exc.code != "LA-STORAGE-CORRUPT":
                raise
            seq = exc.details.get("sequence")
            return IntegrityReport(session_id, last, corrupt_at=seq, message=exc.message)
        return IntegrityReport(session_id, last)

    def _scan_with_tail(self, session_id: str) -> Iterator[SessionEvent]:
        last = 0
        for event in self._scan(session_id):
            last = event.sequence
            yield event
        path = self.path_for(session_id)
        if path.exists():
            with open(path, "rb") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
                size = os.fstat(handle.fileno()).st_size
                tail, _ = read_last_line(handle.fileno(), size) if size else (None, 0)
            if tail is not None and (seq_of(tail) != last or not tail.endswith(b"\n")):
                raise TornTail(last + 1)

    def salvage(self, session_id: str, *, replace: bool = False) -> SalvageReport:
        """Write the intact prefix of a damaged session to ``<name>.salvaged``.

        Lines after the first bad one go to ``<name>.rejected`` (nothing is thrown
        away). With ``replace=True`` the damaged file is kept as ``<name>.corrupt-<ts>``
        and the repaired copy takes its place.
        """
        path = self.path_for(session_id)
        if not path.exists():
            raise StorageError("LA-STORAGE", f"No session {session_id!r} to salvage.")
        kept: list[bytes] = []
        dropped: list[dict[str, Any]] = []
        rejected: list[bytes] = []
        first_bad: int | None = None
        with self._lock, open(path, "rb") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            for line_no, line in enumerate(handle, start=1):
                if first_bad is None:
                    event, reason = parse_line(line, len(kept) + 1)
                    if event is not None:
                        kept.append(line)
                        continue
                    first_bad = len(kept) + 1
                else:
                    reason = "after the first bad line"
                dropped.append({"line": line_no, "sequence": seq_of(line), "reason": reason})
                rejected.append(line if line.endswith(b"\n") else line + b"\n")
            base = path.with_suffix("")
            out = base.with_name(base.name + ".salvaged")
            write_durably(out, b"".join(kept))
            rejected_path = None
            if rejected:
                rejected_path = base.with_name(base.name + ".rejected")
                write_durably(rejected_path, b"".join(rejected))
            if replace:
                keep_as = base.with_name(f"{base.name}.corrupt-{int(time.time() * 1000)}")
                os.replace(path, keep_as)
                os.replace(out, path)
                out = path
                self._tails.pop(path, None)
                self._index.pop(path, None)
        return SalvageReport(
            session_id, out, len(kept), first_bad, dropped, rejected_path, replaced=replace
        )

    # -- sessions --------------------------------------------------------------

    def get_session(self, session_id: str) -> SessionInfo | None:
        """The session's summary (first event, tail sequence, mtime) or ``None``."""
        path = self.path_for(session_id)
        try:
            handle = open(path, "rb")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise path_error(exc, f"Cannot read session {session_id!r}") from exc
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            st = os.fstat(handle.fileno())
            first_line = handle.readline()
            last = 0
            if st.st_size:
                tail, start = read_last_line(handle.fileno(), st.st_size)
                seq = seq_of(tail) if tail is not None else None
                if seq is None or tail is None or not tail.endswith(b"\n"):
                    prev, _ = read_last_line(handle.fileno(), start) if start else (None, 0)
                    seq = seq_of(prev) if prev is not None else 0
                last = seq or 0
        first, _ = parse_line(first_line, 1) if first_line else (None, None)
        return info_from_first(session_id, first, last, st.st_mtime)

    def list_sessions(
        self, *, limit: int = 100, offset: int = 0, owner: Mapping[str, Any] | None = None
    ) -> list[SessionInfo]:
        """Sessions, most recently modified first; with ``owner``, only the ones it opened."""
        files = []
        for path in self.directory.glob("*.jsonl"):
            try:
                files.append((path.stat().st_mtime, path))
            except FileNotFoundError:
                continue
        files.sort(key=lambda item: item[0], reverse=True)
        if owner is not None:
            from lightagent.events.ownership import owned_sessions

            ids = (unquote(path.name[: -len(".jsonl")]) for _, path in files)
            return owned_sessions(self, ids, owner, limit, offset)
        out = []
        for _, path in files[offset : offset + limit]:
            info = self.get_session(unquote(path.name[: -len(".jsonl")]))
            if info is not None:
                out.append(info)
        return out

    def delete(self, session_id: str) -> bool:
        """Remove the session's file."""
        path = self.path_for(session_id)
        with self._lock:
            self._tails.pop(path, None)
            self._index.pop(path, None)
            try:
                path.unlink()
            except FileNotFoundError:
                return False
        return True
