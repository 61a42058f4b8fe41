"""Ending a stdio server's whole process tree, also after the server itself has exited.

The SDK starts each stdio server as the leader of a new session and process group, and
kills that group only when the server outlives its stdin closing. A server that exits (or
crashes) leaves its children running. So we note the group when the server starts and,
after the SDK's own shutdown, end whatever is left in it: SIGTERM, then SIGKILL after
``kill_timeout``. Finding the new process reads ``/proc`` (Linux); elsewhere the SDK's own
tree kill is what applies.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

__all__ = ["child_leaders", "end_group", "group_alive", "pick_leader", "process_alive"]

_PROC = Path("/proc")


def _stat(pid: int) -> tuple[int, int] | None:
    """(ppid, session id) of ``pid``, or None."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = raw.rsplit(")", 1)[-1].split()
    try:
        return int(fields[1]), int(fields[3])
    except (IndexError, ValueError):
        return None


def _children() -> set[int]:
    me = os.getpid()
    found: set[int] = set()
    tasks = _PROC / str(me) / "task"
    try:
        for task in tasks.iterdir():
            try:
                found.update(int(p) for p in (task / "children").read_text().split())
            except OSError:
                raise LookupError from None
        return found
    except (OSError, LookupError):
        pass
    for entry in _PROC.iterdir():  # kernels without the children file
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[0] == me:
                found.add(int(entry.name))
    return found


def child_leaders() -> set[int]:
    """Our child processes that lead their own session (how the SDK starts stdio servers)."""
    if not sys.platform.startswith("linux") or not _PROC.is_dir():
        return set()
    leaders = set()
    for pid in _children():
        stat = _stat(pid)
        if stat is not None and stat[1] == pid:
            leaders.add(pid)
    return leaders


def pick_leader(new: set[int], argv: list[str]) -> int | None:
    """The one new leader running ``argv`` (by its command line when several are new)."""
    if len(new) == 1:
        return next(iter(new))
    for pid in sorted(new):
        try:
            cmdline = (_PROC / str(pid) / "cmdline").read_bytes().split(b"\0")[:-1]
        except OSError:
            continue
        if [part.decode("utf-8", "replace") for part in cmdline] == argv:
            return pid
    return None


def group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process is left in group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not sys.platform.startswith("linux") or not _PROC.is_dir():
        return True
    # Zombies count for killpg; an orphan's zombie may wait long for a reaper (PID 1 in a
    # container often reaps nothing), and it holds no resources: it is not "left running".
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


async def end_group(pgid: int | None, kill_timeout: float) -> None:
    """SIGTERM group ``pgid``, then SIGKILL what is left after ``kill_timeout`` seconds."""
    if pgid is None or sys.platform == "win32" or not group_alive(pgid):
        return
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + kill_timeout
    while group_alive(pgid) and time.monotonic() < deadline:  # noqa: ASYNC110 - polling a process group
        await asyncio.sleep(0.02)
    if group_alive(pgid):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (exists and is no zombie)."""
    if sys.platform.startswith("linux") and _PROC.is_dir():
        try:
            fields = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            return False
        return bool(fields) and fields[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
