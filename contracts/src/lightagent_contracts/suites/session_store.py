"""The ``SessionStore`` contract suite.

Subclass :class:`SessionStoreContract` in your store's tests and provide a
``make_store`` fixture: a zero-argument factory returning a store. Two calls must give
two *instances over the same storage* (same directory, same database) so the suite can
race them; an in-process store returns the same instance::

    from lightagent_contracts.suites.session_store import SessionStoreContract

    class TestMyStore(SessionStoreContract):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: MyStore(tmp_path / "sessions")
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
import uuid
from typing import Any

import pytest
from lightagent.errors import LightAgentError, StorageError, ValidationError
from lightagent.events.model import SessionEvent

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["SessionStoreContract"]

SECRET = "sk-contractCANARY0123456789abcdef"  # lightagent: allow LAV070 (a canary the suite plants)


def _sid() -> str:
    return f"contract-{uuid.uuid4().hex[:10]}"


class SessionStoreContract(ContractSuite):
    """Behaviour every ``SessionStore`` must show. Provide the ``make_store`` fixture."""

    _contract_suite = True

    #: Writers racing in :meth:`test_racing_instances_never_interleave`.
    race_writers: int = 4
    race_events_per_writer: int = 15
    #: Examples and steps of :meth:`test_random_operations_match_a_model` (a store on a
    #: server may take fewer).
    model_examples: int = 25
    model_steps: int = 12

    @pytest.fixture
    def store(self, make_store: Any) -> Any:
        store = make_store()
        yield store
        store.close()

    # -- appends and sequences ---------------------------------------------------

    def test_append_assigns_contiguous_sequences(self, store: Any) -> None:
        sid = _sid()
        first = store.append(sid, [{"type": "session.started"}, {"type": "turn.started"}])
        second = store.append(sid, [SessionEvent("tool.requested", data={"call_id": "c1"})])
        assert [e.sequence for e in first + second] == [1, 2, 3]
        assert [e.sequence for e in store.events(sid)] == [1, 2, 3]
        assert store.last_sequence(sid) == 3

    def test_fields_round_trip(self, store: Any) -> None:
        sid = _sid()
        event = SessionEvent(
            "tool.completed",
            data={
                "call_id": "c1",
                "output": "ok",
                "nested": {"n": [1, 2.5, None, True]},
                "text": "日本語",
            },
            turn_id="t1",
            step_id="s1",
            run_id="r1",
            agent_id="a1",
            parent_event_id="p1",
            trace_id="tr1",
            parent_trace_id="ptr",
            run_group_id="g1",
        )
        (stored,) = store.append(sid, [event])
        (read,) = store.events(sid)
        assert read == stored
        assert read.event_id == event.event_id and read.session_id == sid
        assert read.data["text"] == "日本語" and read.data["nested"] == {"n": [1, 2.5, None, True]}

    def test_stale_expected_sequence_conflicts_and_writes_nothing(self, store: Any) -> None:
        sid = _sid()
        store.append(sid, [{"type": "a.b"}], expected_sequence=0)
        with pytest.raises(StorageError) as info:
            store.append(sid, [{"type": "a.b"}, {"type": "a.c"}], expected_sequence=0)
        assert info.value.code == "LA-STORAGE-CONFLICT"
        assert info.value.details["actual_sequence"] == 1
        assert store.last_sequence(sid) == 1
        store.append(sid, [{"type": "a.c"}], expected_sequence=1)
        assert [e.type for e in store.events(sid)] == ["a.b", "a.c"]

    def test_expected_sequence_on_a_new_session(self, store: Any) -> None:
        sid = _sid()
        with pytest.raises(StorageError) as info:
            store.append(sid, [{"type": "a.b"}], expected_sequence=3)
        assert info.value.code == "LA-STORAGE-CONFLICT"
        assert store.events(sid) == []

    def test_a_bad_event_in_a_batch_writes_nothing(self, store: Any) -> None:
        sid = _sid()
        store.append(sid, [{"type": "a.b"}])
        with pytest.raises(ValidationError):
            store.append(sid, [{"type": "a.c"}, {"no_type": 1}])
        with pytest.raises(ValidationError):
            store.append(sid, [{"type": "a.c"}, {"type": "bad type with spaces"}])
        with pytest.raises(ValidationError):
            store.append(sid, [SessionEvent("a.c", sequence=7)])
        assert store.last_sequence(sid) == 1

    def test_bad_input_gets_typed_errors(self, store: Any) -> None:
        for bad in ("", "../escape", "a/b", ".hidden", "x" * 201, None, 42):
            with pytest.raises(ValidationError):
                store.append(bad, [{"type": "a.b"}])
        with pytest.raises(ValidationError):
            store.events(_sid(), after=-1)
        with pytest.raises(ValidationError):
            store.append(_sid(), [{"type": "a.b"}], expected_sequence=-2)
        with pytest.raises(ValidationError):
            store.append(_sid(), ["not an event"])

    def test_empty_append_is_a_no_op(self, store: Any) -> None:
        sid = _sid()
        assert store.append(sid, []) == []
        assert store.last_sequence(sid) == 0

    # -- reads -------------------------------------------------------------------

    def test_pagination(self, store: Any) -> None:
        sid = _sid()
        store.append(sid, [{"type": "n.e", "data": {"i": i}} for i in range(25)])
        pages, after = [], 0
        while True:
            page = store.events(sid, after=after, limit=10)
            if not page:
                break
            pages.append([e.data["i"] for e in page])
            after = page[-1].sequence
        assert pages == [list(range(10)), list(range(10, 20)), list(range(20, 25))]
        assert store.events(sid, after=25) == []
        assert store.events(sid, limit=0) == []

    def test_unknown_session_reads_empty(self, store: Any) -> None:
        sid = _sid()
        assert store.events(sid) == []
        assert store.last_sequence(sid) == 0
        assert store.get_session(sid) is None
        assert store.delete(sid) is False

    def test_list_sessions_and_metadata(self, store: Any) -> None:
        a, b = _sid(), _sid()
        store.append(a, [{"type": "session.started", "data": {"metadata": {"owner": "ann"}}}])
        store.append(b, [{"type": "session.started", "data": {"metadata": {"owner": "bob"}}}])
        store.append(a, [{"type": "turn.started"}])
        ids = [info.session_id for info in store.list_sessions(limit=1000)]
        assert a in ids and b in ids
        info = store.get_session(a)
        assert info.last_sequence == 2 and info.metadata == {"owner": "ann"}
        assert len(store.list_sessions(limit=1)) == 1

    def test_delete(self, store: Any) -> None:
        sid = _sid()
        store.append(sid, [{"type": "a.b"}])
        assert store.delete(sid) is True
        assert store.events(sid) == [] and store.get_session(sid) is None
        assert store.append(sid, [{"type": "a.b"}])[0].sequence == 1

    def test_export_jsonl(self, store: Any, tmp_path: Any) -> None:
        sid = _sid()
        store.append(sid, [{"type": "a.b", "data": {"i": i}} for i in range(3)])
        buffer = io.StringIO()
        assert store.export(sid, buffer) == 3
        lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
        assert [line["sequence"] for line in lines] == [1, 2, 3]
        path = tmp_path / "export.jsonl"
        assert store.export(sid, path) == 3
        assert path.read_text(encoding="utf-8") == buffer.getvalue()

    def test_lone_surrogates_are_stored_as_replacement_characters(self, store: Any) -> None:
        sid = _sid()
        store.append(sid, [{"type": "turn.started", "data": {"query": "before é"}}])
        stored = store.append(
            sid,
            [
                {
                    "type": "tool.requested",
                    "data": {"arguments": {"q": "\ud800x", "k\udc00": ["\udfff", "😀"]}},
                }
            ],
        )
        clean = {"arguments": {"q": "\ufffdx", "k\ufffd": ["\ufffd", "😀"]}}
        assert stored[0].data == clean
        events = store.events(sid)
        assert [e.data for e in events] == [{"query": "before é"}, clean]  # nothing lost
        buffer = io.StringIO()
        assert store.export(sid, buffer) == 2
        buffer.getvalue().encode("utf-8")  # valid UTF-8 all through

    # -- redaction -----------------------------------------------------------------

    def test_secrets_are_redacted_before_persisting(self, store: Any) -> None:
        sid = _sid()
        store.append(
            sid,
            [
                {
                    "type": "model.requested",
                    "data": {
                        "headers": {
                            "Authorization": f"Bearer {SECRET}",
                            "X-Api-Key": "plain-value",
                        },
                        "openai_api_key": "anything",
                        "messages": [{"role": "user", "content": f"my key is {SECRET}"}],
                        "usage": {"prompt_tokens": 12, "total_tokens": 20},
                    },
                }
            ],
        )
        buffer = io.StringIO()
        store.export(sid, buffer)
        text = buffer.getvalue()
        assert SECRET not in text and "plain-value" not in text and "anything" not in text
        (event,) = store.events(sid)
        assert event.data["usage"] == {"prompt_tokens": 12, "total_tokens": 20}

    # -- concurrency -----------------------------------------------------------------

    def test_racing_instances_never_interleave(self, make_store: Any) -> None:
        sid = _sid()
        stores = [make_store(), make_store()]
        conflicts = [0]
        errors: list[BaseException] = []
        lock = threading.Lock()

        def writer(index: int) -> None:
            store = stores[index % 2]
            try:
                for i in range(self.race_events_per_writer):
                    while True:
                        last = store.last_sequence(sid)
                        try:
                            store.append(
                                sid,
                                [
                                    {"type": "w.e", "data": {"w": index, "i": i, "part": 0}},
                                    {"type": "w.e", "data": {"w": index, "i": i, "part": 1}},
                                ],
                                expected_sequence=last,
                            )
                            break
                        except StorageError as exc:
                            if exc.code != "LA-STORAGE-CONFLICT":
                                raise
                            with lock:
                                conflicts[0] += 1
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(self.race_writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not errors, errors
        events = stores[0].events(sid)
        total = self.race_writers * self.race_events_per_writer * 2
        assert [e.sequence for e in events] == list(range(1, total + 1))
        # Each two-event batch is contiguous: no other writer's event lands inside it.
        for first, second in zip(events[::2], events[1::2], strict=False):
            assert (first.data["w"], first.data["i"]) == (second.data["w"], second.data["i"])
            assert (first.data["part"], second.data["part"]) == (0, 1)
        for w in range(self.race_writers):
            mine = [e.data["i"] for e in events if e.data["w"] == w and e.data["part"] == 0]
            assert mine == list(range(self.race_events_per_writer))
        for store in stores:
            store.close()

    # -- the model -------------------------------------------------------------------

    def test_random_operations_match_a_model(self, make_store: Any) -> None:
        """Random appends, stale appends, forks and checkpoints: the same log and replay as
        a plain list per session (hypothesis shrinks a mismatch to its fewest steps)."""
        from lightagent_contracts.suites._session_model import check_against_model

        check_against_model(make_store, examples=self.model_examples, steps=self.model_steps)

    # -- async -----------------------------------------------------------------------

    def test_async_methods(self, store: Any) -> None:
        sid = _sid()

        async def go() -> list[int]:
            await store.aappend(sid, [{"type": "a.b"}], expected_sequence=0)
            await asyncio.gather(*(store.aappend(sid, [{"type": "a.c"}]) for _ in range(5)))
            assert await store.alast_sequence(sid) == 6
            return [e.sequence for e in await store.aevents(sid, after=2)]

        assert asyncio.run(go()) == [3, 4, 5, 6]

    def test_errors_are_lightagent_errors(self, store: Any) -> None:
        with pytest.raises(LightAgentError) as info:
            store.append("bad/id", [{"type": "a.b"}])
        assert info.value.code.startswith("LA-") and info.value.hint
