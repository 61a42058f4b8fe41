"""PostgreSQL appends with a known ``expected_sequence`` take one statement; the guard holds."""

from __future__ import annotations

import threading
import uuid

import pytest
from lightagent.errors import StorageError
from lightagent.events.sql_store import SqlSessionStore

pytestmark = pytest.mark.postgres


@pytest.fixture
def store(postgres_url):
    s = SqlSessionStore(postgres_url, table_prefix=f"t{uuid.uuid4().hex[:8]}_")
    yield s
    s.close()


def _one(text: str) -> list[dict]:
    return [{"type": "assistant.completed", "data": {"content": text}}]


def test_racing_writers_with_one_expected_sequence_let_exactly_one_in(store) -> None:
    store.append("s", _one("opening"), expected_sequence=0)
    results: list[object] = []
    gate = threading.Barrier(8)

    def write(n: int) -> None:
        gate.wait()
        try:
            results.append(store.append("s", _one(f"writer {n}"), expected_sequence=1))
        except StorageError as exc:
            results.append(exc.code)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r for r in results if isinstance(r, str)) == ["LA-STORAGE-CONFLICT"] * 7
    assert store.last_sequence("s") == 2
    assert [e.sequence for e in store.events("s")] == [1, 2]


def test_a_stale_expected_sequence_conflicts_and_names_the_actual_one(store) -> None:
    store.append("s", _one("a") * 3, expected_sequence=0)
    with pytest.raises(StorageError) as info:
        store.append("s", _one("late"), expected_sequence=1)
    assert info.value.code == "LA-STORAGE-CONFLICT"
    assert store.last_sequence("s") == 3


def test_small_and_large_batches_read_back_exactly_as_appended(store) -> None:
    store.append("s", _one("first"), expected_sequence=0)
    small = [{"type": "tool.completed", "data": {"n": n, "text": "ü'\";--"}} for n in range(5)]
    large = [{"type": "tool.completed", "data": {"n": n}} for n in range(250)]
    stored = store.append("s", small, expected_sequence=1) + store.append(
        "s", large, expected_sequence=6
    )
    back = store.events("s", after=1)
    assert [e.sequence for e in back] == list(range(2, 257))
    assert [e.to_dict() for e in back] == [e.to_dict() for e in stored]
    assert store.get_session("s").last_sequence == 256


def test_redaction_applies_on_the_one_statement_path(store) -> None:
    store.append("s", _one("first"), expected_sequence=0)
    store.append(
        "s",
        [{"type": "tool.completed", "data": {"api_key": "sk-live-0123456789abcdef0123"}}],
        expected_sequence=1,
    )
    assert "sk-live" not in str(store.events("s")[-1].data)
