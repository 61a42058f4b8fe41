"""The model a session store is checked against: random appends, stale appends, forks and
checkpoints give the store the same log and the same replay as a plain list per session.

Used by :meth:`SessionStoreContract.test_random_operations_match_a_model`. Each example
names its sessions with a fresh prefix, so stores that keep their data across examples (a
shared instance, a database) start every example empty all the same.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from lightagent.errors import StorageError
from lightagent.events.manager import SessionManager
from lightagent.events.model import SessionEvent

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

_events = st.builds(
    lambda kind, run, n, text: (kind, run, {"n": n, "text": text}),
    st.sampled_from(KINDS),
    st.sampled_from(RUNS),
    st.integers(-5, 5),
    st.text(max_size=12),
)

Log = list[tuple[str, "str | None", dict[str, Any]]]


def _model_replay(log: Log) -> tuple[int, list[str], list[str], list[str]]:
    """What replay must report, computed from the model's list alone."""
    status: dict[str, str] = {}
    for kind, run, _ in log:
        if run is None:
            continue
        status.setdefault(run, "incomplete")
        if kind == "run.completed":
            status[run] = "completed"
        elif kind == "run.failed":
            status[run] = "failed"

    def runs(state: str) -> list[str]:
        return [run for run, got in status.items() if got == state]

    return (len(log), runs("completed"), runs("incomplete"), runs("failed"))


class _StoreModel(RuleBasedStateMachine):
    make_store: Callable[[], Any]

    @initialize()
    def setup(self) -> None:
        self.store = type(self).make_store()
        self.prefix = f"model-{uuid.uuid4().hex[:8]}"
        self.manager = SessionManager(self.store)
        self.model: dict[str, Log] = {f"{self.prefix}-0": []}

    def teardown(self) -> None:
        if hasattr(self, "store"):
            self.store.close()

    @rule(data=st.data(), batch=st.lists(_events, min_size=1, max_size=4))
    def append(self, data: Any, batch: Log) -> None:
        sid = data.draw(st.sampled_from(sorted(self.model)))
        log = self.model[sid]
        events = [SessionEvent(k, data=d, run_id=r, turn_id=r) for k, r, d in batch]
        self.store.append(sid, events, expected_sequence=len(log))
        log.extend(batch)

    @rule(
        data=st.data(),
        batch=st.lists(_events, min_size=1, max_size=2),
        lag=st.integers(1, 3),
    )
    def stale_append_conflicts(self, data: Any, batch: Log, lag: int) -> None:
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
    def checkpoint(self, data: Any) -> None:
        sid = data.draw(st.sampled_from(sorted(s for s, log in self.model.items() if log)))
        cp = self.manager.checkpoint(sid, "cp")
        assert cp.sequence == len(self.model[sid])
        self.model[sid].append(("session.checkpointed", None, {}))

    @precondition(lambda self: any(self.model.values()) and len(self.model) < 6)
    @rule(data=st.data())
    def fork(self, data: Any) -> None:
        sid = data.draw(st.sampled_from(sorted(s for s, log in self.model.items() if log)))
        through = data.draw(st.integers(1, len(self.model[sid])))
        new_id = self.manager.fork(
            sid, through_sequence=through, new_session_id=f"{self.prefix}-{len(self.model)}"
        )
        self.model[new_id] = [*self.model[sid][:through], ("session.forked", None, {})]

    @invariant()
    def same_as_model(self) -> None:
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


def check_against_model(make_store: Callable[[], Any], *, examples: int, steps: int) -> None:
    """Run the model machine on stores from ``make_store``; a mismatch fails with its steps."""

    class Machine(_StoreModel):
        pass

    Machine.make_store = staticmethod(make_store)
    settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )(Machine)
    Machine.TestCase("runTest").runTest()
