"""``JsonLightFlowStore``: flow runs as JSON files in a directory, every write atomic.

Layout (one folder per run)::

    <directory>/<run_id>/run.json              the header
    <directory>/<run_id>/steps.jsonl           the step commits, one JSON line each
    <directory>/<run_id>/approvals/<key>.json  persisted approval decisions
    <directory>/<run_id>/cancel.json           present while a cancel is requested
    <directory>/<run_id>/epoch.json, .lock     the fencing epoch and the lock guarding it

A step commit appends one line to the run's journal under the run's lock and syncs it
(``fdatasync``: one flush, where a file per step cost a file sync, a rename and a folder
sync); a later line for a step replaces an earlier one. A writer killed mid-append
leaves a torn last line without its newline: readers ignore it, and the next append cuts
it off first. Earlier versions kept one file per step (``steps/<key>.json``); those still
load, and the journal's lines take precedence over them. Every other file is written to a
temporary file in the same folder, flushed and fsynced, then moved over the target with
``os.replace`` and the folder fsynced: a reader sees the old or the new file, never a torn
one. A file or a journal line that does not parse raises ``LA-STORAGE-CORRUPT`` naming
it; nothing is skipped silently.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no fencing of concurrent resumes
    fcntl = None  # type: ignore[assignment]

from lightagent.errors import StorageError

from lightagent_flow.stores.base import FaultHook, assemble_record, check_run_id, fenced_out

__all__ = ["JsonLightFlowStore"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _key(step: str) -> str:
    digest = hashlib.sha256(step.encode("utf-8")).hexdigest()[:12]
    return f"{_UNSAFE.sub('_', step)[:40]}-{digest}"


# A step line is one JSON object with no raw newline in it (JSON escapes them).
_encode = json.JSONEncoder(ensure_ascii=False).encode
# fdatasync flushes the data and the size an append changed; macOS has only fsync.
_datasync = getattr(os, "fdatasync", os.fsync)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _cut_torn_line(fd: int, size: int) -> None:
    """Cut a journal back to its last complete line (a killed writer's torn append)."""
    os.ftruncate(fd, os.pread(fd, size, 0).rfind(b"\n") + 1)
    os.fsync(fd)


class JsonLightFlowStore:
    """Flow run records as atomic JSON files under ``directory``.

    The folder is created by the first write, never by building the store or reading it:
    a read of a folder that does not exist finds no runs.
    """

    blocking = True

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        blocker = next((p for p in (self.directory, *self.directory.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            raise StorageError(
                "LA-STORAGE",
                f"cannot use {self.directory} as the flow store folder: {blocker} is a file",
            )
        self._fault: FaultHook | None = None

    def exists(self) -> bool:
        """Whether the store's folder exists (creates nothing)."""
        return self.directory.is_dir()

    def __repr__(self) -> str:
        return f"JsonLightFlowStore({str(self.directory)!r})"

    # -- files ---------------------------------------------------------------

    def _run_dir(self, run_id: str) -> Path:
        return self.directory / check_run_id(run_id)

    def _write(
        self,
        path: Path,
        data: dict[str, Any],
        *,
        fault: tuple[str, str] | None = None,
        exclusive: bool = False,
    ) -> bool:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(data, ensure_ascii=False, sort_keys=True)
            tmp = path.parent / f".tmp-{path.name}-{uuid.uuid4().hex}"
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if fault and self._fault:
                self._fault("inside_commit", *fault)
            if exclusive:
                try:  # link() never replaces: of several writers exactly one wins
                    os.link(tmp, path)
                except FileExistsError:
                    return False
                finally:
                    os.unlink(tmp)
            else:
                os.replace(tmp, path)
            _fsync_dir(path.parent)
            return True
        except OSError as exc:
            raise StorageError("LA-STORAGE", f"cannot write {path}: {exc}") from exc

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError("LA-STORAGE", f"cannot read {path}: {exc}") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise StorageError(
                "LA-STORAGE-CORRUPT",
                f"{path} is not valid JSON: {exc}",
                details={"path": str(path)},
            ) from exc
        if not isinstance(data, dict):
            raise StorageError(
                "LA-STORAGE-CORRUPT",
                f"{path} does not hold a JSON object",
                details={"path": str(path)},
            )
        return data

    def _read_folder(self, folder: Path) -> list[dict[str, Any]]:
        if not folder.is_dir():
            return []
        out = []
        for path in sorted(folder.glob("*.json")):
            data = self._read(path)
            if data is not None:
                out.append(data)
        return out

    # -- the store contract --------------------------------------------------

    @contextlib.contextmanager
    def _fenced(self, run_id: str, epoch: int | None, *, lock: bool = False) -> Iterator[None]:
        """Hold the run's lock file and check its epoch (``flock``: one host, as JSON files are).

        Without ``epoch`` the lock is taken only when ``lock`` asks for it.
        """
        if (epoch is None and not lock) or fcntl is None:
            yield
            return
        folder = self._run_dir(run_id)
        try:
            fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if epoch is not None:
                current = self._epoch(folder)
                if current != epoch:
                    raise fenced_out(run_id, epoch, current)
            yield
        finally:
            os.close(fd)  # closing releases the lock (a killed process releases it too)

    def _epoch(self, folder: Path) -> int:
        data = self._read(folder / "epoch.json")
        return int(data["epoch"]) if data else 0

    def save_header(self, run_id: str, header: dict[str, Any], *, epoch: int | None = None) -> None:
        """Write (replace) the run's header."""
        with self._fenced(run_id, epoch):
            self._write(self._run_dir(run_id) / "run.json", header)

    def claim_run(self, run_id: str) -> int:
        """Bump and return the run's epoch (under the run's lock file)."""
        folder = self._run_dir(run_id)
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            epoch = self._epoch(folder) + 1
            self._write(folder / "epoch.json", {"epoch": epoch})
            # Temporary files a killed runner left mid-commit: step writes happen under this
            # lock, so none is in progress now.
            for stale in (folder / "steps").glob(".tmp-*"):
                with contextlib.suppress(FileNotFoundError):
                    stale.unlink()
            return epoch
        finally:
            os.close(fd)

    def commit_step(self, run_id: str, step: dict[str, Any], *, epoch: int | None = None) -> bool:
        """Durably record one step's result (a journal line); returns whether a cancel is requested."""
        name = step["name"]
        if self._fault:
            self._fault("before_commit", run_id, name)
        folder = self._run_dir(run_id)
        line = (_encode(step) + "\n").encode("utf-8")
        with self._fenced(run_id, epoch, lock=True):
            self._append(folder / "steps.jsonl", line, (run_id, name))
        if self._fault:
            self._fault("after_commit", run_id, name)
        return os.path.exists(folder / "cancel.json")

    def _append(self, path: Path, line: bytes, fault: tuple[str, str]) -> None:
        """Append ``line`` to a journal and sync it (under the run's lock)."""
        try:
            try:
                fd, created = os.open(path, os.O_RDWR | os.O_APPEND), False
            except FileNotFoundError:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, created = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644), True
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    _cut_torn_line(fd, size)
                if self._fault:  # a torn append, as a writer killed mid-write leaves it
                    _write_all(fd, line[: len(line) // 2])
                    self._fault("inside_commit", *fault)
                    line = line[len(line) // 2 :]
                _write_all(fd, line)
                _datasync(fd)
            finally:
                os.close(fd)
            if created:  # the journal's name in its folder must survive a crash too
                _fsync_dir(path.parent)
        except OSError as exc:
            raise StorageError("LA-STORAGE", f"cannot append to {path}: {exc}") from exc

    def _read_journal(self, path: Path) -> dict[str, dict[str, Any]]:
        """The steps a journal holds (the last line of a step wins; a torn last line is no commit)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise StorageError("LA-STORAGE", f"cannot read {path}: {exc}") from exc
        steps: dict[str, dict[str, Any]] = {}
        for number, raw in enumerate(data[: data.rfind(b"\n") + 1].splitlines(), 1):
            try:
                record = json.loads(raw)
            except ValueError as exc:
                record = exc
            if not isinstance(record, dict) or not isinstance(record.get("name"), str):
                raise StorageError(
                    "LA-STORAGE-CORRUPT",
                    f"{path} line {number} is not a step record",
                    details={"path": str(path), "line": number},
                )
            steps[record["name"]] = record
        return steps

    def set_approval(
        self, run_id: str, step: str, decision: dict[str, Any], *, exclusive: bool = False
    ) -> bool:
        """Persist a decision for ``step`` (with ``exclusive``, only when it has none)."""
        path = self._run_dir(run_id) / "approvals" / f"{_key(step)}.json"
        return self._write(path, {"step": step, **decision}, exclusive=exclusive)

    def clear_approvals(self, run_id: str, steps: list[str]) -> None:
        """Forget the decisions of ``steps``."""
        folder = self._run_dir(run_id) / "approvals"
        for name in steps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(folder / f"{_key(name)}.json")
        if folder.is_dir():
            _fsync_dir(folder)

    def request_cancel(self, run_id: str, reason: str | None = None) -> None:
        """Ask whoever runs ``run_id`` to stop before its next step."""
        self._write(self._run_dir(run_id) / "cancel.json", {"reason": reason})

    def clear_cancel(self, run_id: str) -> None:
        """Withdraw a cancel request."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._run_dir(run_id) / "cancel.json")

    def cancel_requested(self, run_id: str) -> bool:
        """Whether a cancel was requested for ``run_id``."""
        return (self._run_dir(run_id) / "cancel.json").exists()

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The assembled record, or ``None`` when there is no such run."""
        folder = self._run_dir(run_id)
        header = self._read(folder / "run.json")
        if header is None:
            return None
        steps = {s["name"]: s for s in self._read_folder(folder / "steps")}  # earlier versions
        steps.update(self._read_journal(folder / "steps.jsonl"))
        approvals = {}
        for data in self._read_folder(folder / "approvals"):
            name = data.pop("step")
            approvals[name] = data
        return assemble_record(header, steps, approvals, (folder / "cancel.json").exists())

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run's header, most recently updated first."""
        headers = []
        for path in self.directory.glob("*/run.json"):
            data = self._read(path)
            if data is not None:
                headers.append(data)
        return sorted(headers, key=lambda h: h.get("updated_at") or 0, reverse=True)

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
