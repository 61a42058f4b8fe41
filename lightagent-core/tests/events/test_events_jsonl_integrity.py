"""JSONL store: torn tails, mid-file corruption, salvage, fsync failure, process races."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap

import pytest
from lightagent.errors import StorageError
from lightagent.events.jsonl_store import JsonlSessionStore


def _fill(store: JsonlSessionStore, sid: str, n: int) -> None:
    store.append(sid, [{"type": "n.e", "data": {"i": i, "pad": "x" * (i % 7)}} for i in range(n)])


def test_lines_carry_sequence_and_checksum(tmp_path):
    store = JsonlSessionStore(tmp_path)
    _fill(store, "s", 3)
    lines = store.path_for("s").read_bytes().splitlines()
    assert len(lines) == 3
    for seq, line in enumerate(lines, start=1):
        frame = json.loads(line)
        assert frame["seq"] == seq and len(frame["crc"]) == 8 and frame["event"]["sequence"] == seq


def test_append_never_rewrites_the_file(tmp_path):
    store = JsonlSessionStore(tmp_path)
    _fill(store, "s", 5)
    path = store.path_for("s")
    before, inode = path.read_bytes(), path.stat().st_ino
    _fill(store, "s", 2)
    after = path.read_bytes()
    assert after.startswith(before) and path.stat().st_ino == inode


@pytest.mark.parametrize("seed", range(12))
def test_torn_tail_reported_and_prefix_readable(tmp_path, seed):
    store = JsonlSessionStore(tmp_path)
    _fill(store, "s", 20)
    path = store.path_for("s")
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = random.Random(seed).randrange(last_start + 1, len(data))  # inside the last record
    path.write_bytes(data[:cut])
    fresh = JsonlSessionStore(tmp_path)
    report = fresh.verify("s")
    assert report.torn_tail_at == 20 and report.message == "torn tail at sequence 20"
    events = fresh.events("s")
    assert [e.data["i"] for e in events] == list(range(19))
    assert fresh.last_sequence("s") == 19
    # The next append cuts the unacknowledged bytes and resumes at 20.
    (appended,) = fresh.append("s", [{"type": "n.e", "data": {"i": 99}}], expected_sequence=19)
    assert appended.sequence == 20
    assert [e.sequence for e in fresh.events("s")] == list(range(1, 21))
    assert path.read_bytes()[:last_start] == data[:last_start]


def test_torn_tail_refused_when_repair_is_off(tmp_path):
    store = JsonlSessionStore(tmp_path)
    _fill(store, "s", 3)
    path = store.path_for("s")
    path.write_bytes(path.read_bytes()[:-5])
    strict = JsonlSessionStore(tmp_path, repair_torn_tail=False)
    with pytest.raises(StorageError) as info:
        strict.append("s", [{"type": "n.e"}])
    assert (
        info.value.code == "LA-STORAGE-CORRUPT" and "torn tail at sequence 3" in info.value.message
    )


@pytest.mark.parametrize("where", ["sequence", "checksum", "event", "closing brace"])
@pytest.mark.parametrize("reader", ["same store", "fresh store"])
def test_a_complete_last_line_that_fails_its_check_is_corruption_not_a_tear(
    tmp_path, where, reader
):
    store = JsonlSessionStore(tmp_path)
    _fill(store, "s", 5)
    path = store.path_for("s")
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    last = bytearray(data[start:])
    offset = {
        "sequence": len(b'{"seq":'),
        "checksum": len(b'{"seq":5,"crc":"') + 2,
        "event": len(last) // 2,
        "closing brace": len(last) - 3,
    }[where]
    last[offset] ^= 0x01  # one flipped bit; the line keeps its newline
    damaged = data[:start] + bytes(last)
    assert damaged.endswith(b"\n") and damaged.count(b"\n") == 5
    path.write_bytes(damaged)
    target = store if reader == "same store" else JsonlSessionStore(tmp_path)
    report = target.verify("s")
    assert report.corrupt_at == 5 and report.torn_tail_at is None and not report.ok
    with pytest.raises(StorageError) as info:
        target.events("s")
    assert info.value.code == "LA-STORAGE-CORRUPT" and info.value.details["sequence"] == 5
    # Nothing is cut and nothing appended (the sequence is never reused) until salvage.
    for expected in (None, 4, 5):
        with pytest.raises(StorageError) as info:
            target.append("s", [{"type": "n.e", "data": {"i": 99}}], expected_sequence=expected)
        assert info.value.code == "LA-STORAGE-CORRUPT", expected
        assert "salvage" in info.value.hint
    assert path.read_bytes() == damaged
    report = target.salvage("s", replace=True)
    assert report.kept == 4 and report.first_bad_sequence == 5 and report.rejected_path.exists()
    assert target.append("s", [{"type": "n.e"}])[0].sequence == 5


def test_an_unterminated_last_line_is_a_tear_even_when_its_checksum_holds(tmp_path):
    store = JsonlSessionStore(tmp_path)
    _fill(store, "s", 3)
    path = store.path_for("s")
    path.write_bytes(path.read_bytes()[:-1])  # only the newline is missing
    fresh = JsonlSessionStore(tmp_path)
    assert fresh.verify("s").torn_tail_at == 3
    assert fresh.append("s", [{"type": "n.e"}])[0].sequence == 3


@pytest.mark.parametrize("damage", ["flip", "delete", "garbage"])
def test_mid_file_corruption_raises_with_sequence_and_salvages(tmp_path, damage):
    store = JsonlSessionStore(tmp_path)
    _fill(store, "s", 10)
    path = store.path_for("s")
    lines = path.read_bytes().splitlines(keepends=True)
    if damage == "flip":
        line = bytearray(lines[4])
        line[len(line) // 2 + 3] ^= 0x01
        lines[4] = bytes(line)
    elif damage == "delete":
        del lines[4]
    else:
        lines[4] = b"not json at all\n"
    path.write_bytes(b"".join(lines))
    fresh = JsonlSessionStore(tmp_path)
    with pytest.raises(StorageError) as info:
        fresh.events("s")
    assert info.value.code == "LA-STORAGE-CORRUPT"
    assert info.value.details["sequence"] == 5 and "salvage" in info.value.details
    assert fresh.verify("s").corrupt_at == 5
    # Pages before the damage stay readable.
    assert [e.sequence for e in fresh.events("s", limit=4)] == [1, 2, 3, 4]
    report = fresh.salvage("s")
    assert report.kept == 4 and report.first_bad_sequence == 5
    assert report.dropped and report.rejected_path.exists()
    salvaged = [json.loads(x)["seq"] for x in report.path.read_bytes().splitlines()]
    assert salvaged == [1, 2, 3, 4]
    assert path.read_bytes() == b"".join(lines)  # the original is untouched
    replaced = fresh.salvage("s", replace=True)
    assert replaced.replaced and [e.sequence for e in fresh.events("s")] == [1, 2, 3, 4]
    assert fresh.append("s", [{"type": "n.e"}])[0].sequence == 5
    assert list(tmp_path.glob("*.corrupt-*"))


def test_failed_fsync_makes_the_store_read_only(tmp_path, monkeypatch):
    store = JsonlSessionStore(tmp_path)
    _fill(store, "s", 2)

    def broken(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(StorageError) as info:
        store.append("s", [{"type": "n.e"}])
    assert "fsync failed" in info.value.message
    monkeypatch.undo()
    with pytest.raises(StorageError) as again:
        store.append("s", [{"type": "n.e"}])
    assert "read-only" in again.value.message


_RACER = textwrap.dedent(
    """
    import sys
    from lightagent.errors import StorageError
    from lightagent.events.jsonl_store import JsonlSessionStore
    from lightagent.events.sql_store import SqliteSessionStore
    kind, target, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = JsonlSessionStore(target) if kind == "jsonl" else SqliteSessionStore(target)
    conflicts = 0
    for i in range(n):
        while True:
            last = store.last_sequence("race")
            try:
                store.append("race", [{"type": "w.e", "data": {"w": name, "i": i, "p": 0}},
                                      {"type": "w.e", "data": {"w": name, "i": i, "p": 1}}],
                             expected_sequence=last)
                break
            except StorageError as exc:
                assert exc.code == "LA-STORAGE-CONFLICT", exc
                conflicts += 1
    print(conflicts)
    """
)


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_two_processes_race_without_interleaving(tmp_path, kind):
    target = str(tmp_path / ("sessions" if kind == "jsonl" else "s.db"))
    script = tmp_path / "racer.py"
    script.write_text(_RACER)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), kind, target, name, "40"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (_out, err) in zip(procs, outs, strict=False):
        assert proc.returncode == 0, err
    from lightagent.events.sql_store import SqliteSessionStore

    store = JsonlSessionStore(target) if kind == "jsonl" else SqliteSessionStore(target)
    events = store.events("race")
    assert [e.sequence for e in events] == list(range(1, 161))
    for first, second in zip(events[::2], events[1::2], strict=False):
        assert (first.data["w"], first.data["i"], first.data["p"]) == (
            second.data["w"],
            second.data["i"],
            0,
        )
    for name in ("a", "b"):
        assert [e.data["i"] for e in events if e.data["w"] == name and e.data["p"] == 0] == list(
            range(40)
        )


def test_pages_deep_in_a_long_file_use_the_offset_index(tmp_path):
    store = JsonlSessionStore(tmp_path, fsync=False)
    _fill(store, "s", 3000)
    assert [e.data["i"] for e in store.events("s", after=2500, limit=3)] == [2500, 2501, 2502]
    # The first full pass indexed the file; later pages start near their target.
    _inode, marks = store._index[store.path_for("s")]
    assert max(marks) > 2000
    pages, after = [], 0
    while page := store.events("s", after=after, limit=700):
        pages.append(len(page))
        after = page[-1].sequence
    assert sum(pages) == 3000 and after == 3000
    # A replaced file (salvage, delete + recreate) never reuses stale offsets.
    store.delete("s")
    _fill(store, "s", 5)
    assert [e.sequence for e in store.events("s", after=2)] == [3, 4, 5]
    # Corruption before the jump point is still caught by a full read.
    other = JsonlSessionStore(tmp_path)
    assert other.events("s", after=4)[0].sequence == 5


def test_sqlite_store_waits_for_a_lock_held_while_it_switches_to_wal(tmp_path):
    import sqlite3
    import threading

    from lightagent.events.sql_store import SqliteSessionStore

    path = tmp_path / "held.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO other VALUES (1)")
    threading.Timer(0.4, holder.execute, args=("COMMIT",)).start()
    store = SqliteSessionStore(path)
    stored = store.append("s", [{"type": "w.e"}], expected_sequence=0)
    assert [e.sequence for e in stored] == [1]
    with sqlite3.connect(path) as probe:
        assert probe.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    holder.close()
