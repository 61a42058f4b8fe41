"""Session recording that survives a DBOS replay without writing an event twice.

When DBOS recovers a workflow it runs the workflow function again from the top: the
steps that finished return their checkpointed results, and the loop between them runs
again, so it emits the same trace events in the same order. The recorder made here
first counts, per trace type, the events this run already has in the session log; it
then lets that many events of each type pass unrecorded before recording again.

Counting per type (not overall) matters: events emitted inside a step (``tool_finished``
while a tool round runs) are not emitted again when the step's result is replayed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from lightagent.events.mapping import trace_type_of

__all__ = ["ReplayBinding"]


class ReplayBinding:
    """A session binding that records like ``inner`` and skips what a replay repeats."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        # history(), ahistory(), call(), store ... are the inner binding's own
        return getattr(self.inner, name)

    def observer(
        self, session_id: str, run_id: str, *, owner: dict[str, str] | None = None
    ) -> _SkipRecorded:
        """The inner binding's recorder for ``run_id``, behind the replay filter."""
        recorder = self.inner.observer(session_id, run_id, owner=owner)
        return _SkipRecorded(recorder, recorded_counts(self.inner.store, session_id, run_id))


def recorded_counts(store: Any, session_id: str, run_id: str) -> Counter[str]:
    """How many events of each trace type ``run_id`` has recorded in the session."""
    counts: Counter[str] = Counter()
    if not store.last_sequence(session_id):
        return counts
    for event in store.events(session_id):
        if event.run_id != run_id or "companion_of" in event.data:
            continue
        kind = trace_type_of(event)
        if kind is not None:
            counts[kind] += 1
    return counts


class _SkipRecorded:
    """Passes a trace event to the recorder unless the log already holds it."""

    def __init__(self, recorder: Any, skip: Counter[str]) -> None:
        self.recorder = recorder
        self.skip = skip
        # the loop must stop a run whose events cannot be recorded, as with the recorder itself
        self.fail_closed = getattr(recorder, "fail_closed", False)

    def on_event(self, run: Any, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind is not None and self.skip[kind] > 0:
            self.skip[kind] -= 1
            return
        self.recorder.on_event(run, event)
