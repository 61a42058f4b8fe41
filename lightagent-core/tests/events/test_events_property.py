"""Property: random appends, conflicts, forks and checkpoints give every store the same
log and the same replay as a plain in-memory model."""

from __future__ import annotations

import shutil
import tempfile
import uuid

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from lightagent.errors import StorageError
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.manager import SessionManager
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.model import SessionEvent
from lightagent.events.sql_store import SqliteSessionStore, SqlSessionStore

RUNS = ["r1", "r2", "r3"]
KINDS = [
    "turn.started",
    "model.requested",
    "assistant.completed",
    "tool.requested",
    "tool.completed",
    "run.completed",
    "run.failed",
    "note.added",
]

event_strategy = st.builds(
    lambda kind, run, n, text: (kind, run, {"n": n, "text": text}),
    st.sampled_from(KINDS),
    st.sampled_from(RUNS),
    st.integers(-5, 5),
    st.text(max_size=12),
)


def _model_replay(log):
    """The reference: replay's turn lists from the model's list, computed independently."""
    status = {}
    for kind, run, _ in log:
        if run is None:
            continue
        status.setdefault(run, "incomplete")
        if kind == "run.completed":
            status[run] = "completed"
        elif kind == "run.failed":
            status[run] = "failed"

    def runs(state):
        return [run for run, got in status.items() if got == state]

    return (len(log), runs("completed"), runs("incomplete"), runs("failed"))


class StoreMachine(RuleBasedStateMachine):
    backend = "memory"
    postgres_url: str | None = None

    @initialize()
    def setup(self):
        self.tmp = tempfile.mkdtemp(prefix="la-prop-")
        if self.backend == "memory":
            self.store = InMemorySessionStore()
        elif self.backend == "jsonl":
            self.store = JsonlSessionStore(self.tmp)
        elif self.backend == "sqlite":
            self.store = SqliteSessionStore(f"{self.tmp}/s.db", synchronous="OFF")
        else:
            self.store = SqlSessionStore(
                self.postgres_url, table_prefix=f"p{uuid.uuid4().hex[:8]}_"
            )
        self.manager = SessionManager(self.store)
        self.model: dict[str, list[tuple[str, str | None, dict]]] = {"s0": []}

    def teardown(self):
        if hasattr(self, "store"):
            self.store.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    @rule(data=st.data(), batch=st.lists(event_strategy, min_size=1, max_size=4))
    def append(self, data, batch):
        sid = data.draw(st.sampled_from(sorted(self.model)))
        log = self.model[sid]
        events = [SessionEvent(k, data=d, run_id=r, turn_id=r) for k, r, d in batch]
        self.store.append(sid, events, expected_sequence=len(log))
        log.extend(batch)

    @rule(
        data=st.data(),
        batch=st.lists(event_strategy, min_size=1, max_size=2),
        lag=st.integers(1, 3),
    )
    def stale_append_conflicts(self, data, batch, lag):
        sid = data.draw(st.sampled_from(sorted(self.model)))
        log = self.model[sid]
        stale = max(0, len(log) - lag) if log else len(log) + lag
        with pytest.raises(StorageError) as info:
            self.store.append(
                sid, [SessionEvent(k, data=d) for k, _, d in batch], expected_sequence=stale
            )
        assert info.value.code == "LA-STORAGE-CONFLICT"

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data())
    def checkpoint(self, data):
        sid = data.draw(st.sampled_from(sorted(s for s, log in self.model.items() if log)))
        cp = self.manager.checkpoint(sid, "cp")
        assert cp.sequence == len(self.model[sid])
        self.model[sid].append(("session.checkpointed", None, {}))

    @precondition(lambda self: any(self.model.values()) and len(self.model) < 6)
    @rule(data=st.data())
    def fork(self, data):
        sid = data.draw(st.sampled_from(sorted(s for s, log in self.model.items() if log)))
        through = data.draw(st.integers(1, len(self.model[sid])))
        new_id = self.manager.fork(
            sid, through_sequence=through, new_session_id=f"s{len(self.model)}"
        )
        self.model[new_id] = [*self.model[sid][:through], ("session.forked", None, {})]

    @invariant()
    def same_as_model(self):
        if not hasattr(self, "store"):
            return
        for sid, log in self.model.items():
            events = self.store.events(sid)
            assert [(e.type, e.run_id) for e in events] == [(k, r) for k, r, _ in log]
            for event, (kind, _, data) in zip(events, log, strict=True):
                if kind not in ("session.checkpointed", "session.forked"):
                    assert event.data == data
            exists = getattr(self.store, "exists", None)
            if exists is not None and not exists():
                # Nothing written yet: the store does not exist, and replay says so.
                assert not log and self.store.last_sequence(sid) == 0
                with pytest.raises(StorageError) as info:
                    self.manager.replay(sid)
                assert info.value.code == "LA-STORAGE-NOT-FOUND"
                continue
            replay = self.manager.replay(sid)
            got = (
                replay.event_count,
                replay.completed_turns,
                replay.incomplete_turns,
                replay.failed_turns,
            )
            assert got == _model_replay(log)
            assert self.store.last_sequence(sid) == len(log)


SETTINGS = settings(
    max_examples=25,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


class MemoryMachine(StoreMachine):
    backend = "memory"


class JsonlMachine(StoreMachine):
    backend = "jsonl"


class SqliteMachine(StoreMachine):
    backend = "sqlite"


TestMemoryStoreMatchesModel = SETTINGS(MemoryMachine).TestCase
TestJsonlStoreMatchesModel = SETTINGS(JsonlMachine).TestCase
TestSqliteStoreMatchesModel = SETTINGS(SqliteMachine).TestCase


@pytest.mark.postgres
def test_postgres_store_matches_model(postgres_url):
    class PostgresMachine(StoreMachine):
        backend = "postgres"

    PostgresMachine.postgres_url = postgres_url
    settings(
        max_examples=8,
        stateful_step_count=10,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )(PostgresMachine).TestCase("runTest").runTest()
