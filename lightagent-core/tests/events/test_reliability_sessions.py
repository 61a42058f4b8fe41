"""Reliability anchors for the session stores: disk errors mid-write, every torn-tail cut.

* A write that fails part-way (disk full, quota, a file size limit) must leave no part of
  the batch behind and give a typed error; the store goes on once the disk is fixed. The
  fault is real: a child process lowers ``RLIMIT_FSIZE`` so the kernel cuts the write
  short and then refuses it (EFBIG), as it does for a full disk.
* A torn last record is recognised at every byte it can be cut at, not only at a few
  random ones.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.sql_store import SqliteSessionStore

_WRITER = textwrap.dedent(
    """
    import json, os, resource, sys
    from lightagent.errors import LightAgentError
    from lightagent.events.jsonl_store import JsonlSessionStore
    from lightagent.events.sql_store import SqliteSessionStore

    kind, target, folder = sys.argv[1], sys.argv[2], sys.argv[3]
    make = JsonlSessionStore if kind == "jsonl" else SqliteSessionStore
    store = make(target)
    pad = "x" * 1000
    store.append("s", [{"type": "n.e", "data": {"i": i, "pad": pad}} for i in range(3)],
                 expected_sequence=0)
    biggest = max(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    # Room for about two of the next three ~1.1 kB events: the write is cut mid-batch.
    resource.setrlimit(resource.RLIMIT_FSIZE, (biggest + 2500, hard))
    out = {}
    try:
        store.append("s", [{"type": "n.e", "data": {"i": 10 + i, "pad": pad}} for i in range(3)],
                     expected_sequence=3)
        out["failed"] = None
    except LightAgentError as exc:
        out["failed"] = exc.code
        out["hint"] = exc.hint
    except Exception as exc:
        out["failed"] = "untyped " + type(exc).__name__
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # the disk has room again
    out["next"] = store.append("s", [{"type": "n.e", "data": {"i": 99}}])[0].sequence
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_a_write_cut_short_keeps_no_part_of_the_batch(tmp_path, kind):
    folder = tmp_path / "store"
    folder.mkdir()
    target = folder if kind == "jsonl" else folder / "s.db"
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    proc = subprocess.run(
        [sys.executable, str(script), kind, str(target), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # A typed error with a hint, never a bare OSError.
    assert out["failed"] in ("LA-STORAGE", "LA-STORAGE-UNAVAILABLE"), out
    assert out["hint"]
    # The next append goes on right after the last acknowledged event.
    assert out["next"] == 4
    store = JsonlSessionStore(target) if kind == "jsonl" else SqliteSessionStore(target)
    events = store.events("s")
    assert [e.data["i"] for e in events] == [0, 1, 2, 99]
    assert [e.sequence for e in events] == [1, 2, 3, 4]
    if kind == "jsonl":
        assert store.verify("s").ok
    store.close()


def test_every_cut_inside_the_last_record_is_a_torn_tail(tmp_path):
    source = JsonlSessionStore(tmp_path / "src", fsync=False)
    source.append("s", [{"type": "n.e", "data": {"i": i}} for i in range(3)])
    data = source.path_for("s").read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    cuts = range(last_start + 1, len(data))  # 1 byte of the record .. all but its newline
    assert len(cuts) > 100
    for cut in cuts:
        folder = tmp_path / f"cut{cut}"
        store = JsonlSessionStore(folder, fsync=False)
        path = store.path_for("s")
        folder.mkdir()
        path.write_bytes(data[:cut])
        report = store.verify("s")
        assert (report.torn_tail_at, report.last_sequence) == (3, 2), cut
        assert [e.data["i"] for e in store.events("s")] == [0, 1], cut
        assert store.get_session("s").last_sequence == 2, cut
        (appended,) = store.append("s", [{"type": "n.e", "data": {"i": 9}}], expected_sequence=2)
        assert appended.sequence == 3, cut
        assert path.read_bytes()[:last_start] == data[:last_start], cut
        assert [e.data["i"] for e in JsonlSessionStore(folder).events("s")] == [0, 1, 9], cut


@pytest.fixture
def sql_store(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    try:
        yield store
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["delete", "garbage", "wrong-sequence"])
def test_sql_store_never_skips_a_damaged_row(sql_store, damage):
    """A missing, undecodable or misnumbered row in the middle is LA-STORAGE-CORRUPT at its
    sequence, and the events before it stay readable."""
    from lightagent.errors import StorageError

    sql_store.append("s", [{"type": "n.e", "data": {"i": i}} for i in range(10)])
    table = sql_store._tables[1]
    sql = sql_store._db.sql
    where = "WHERE session_id = 's' AND sequence = 5"
    with sql_store._write() as cur:  # the store's own connection
        if damage == "delete":
            cur.execute(f"DELETE FROM {table} {where}")
        elif damage == "garbage":
            cur.execute(sql(f"UPDATE {table} SET payload = ? {where}"), ("{not json",))
        else:  # the payload of event 6 stored under sequence 5
            cur.execute(f"SELECT payload FROM {table} WHERE session_id = 's' AND sequence = 6")
            six = cur.fetchone()[0]
            cur.execute(sql(f"UPDATE {table} SET payload = ? {where}"), (six,))
    with pytest.raises(StorageError) as info:
        sql_store.events("s")
    assert info.value.code == "LA-STORAGE-CORRUPT"
    assert info.value.details["sequence"] == 5 and info.value.hint
    with pytest.raises(StorageError):
        sql_store.events("s", after=4, limit=3)  # a page starting at the damage
    assert [e.data["i"] for e in sql_store.events("s", limit=4)] == [0, 1, 2, 3]
    assert [e.sequence for e in sql_store.events("s", after=5)] == [6, 7, 8, 9, 10]
