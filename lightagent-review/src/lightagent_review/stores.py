"""Review stores in memory and in a JSON file; both follow :class:`ReviewStore`.

A decision is consumed exactly once (:meth:`ReviewStore.consume`): that is what makes an
approved call run once and a replayed approval fail. The JSON store re-reads its file
under an exclusive file lock for every operation and writes atomically (temporary file,
fsync, rename), so two processes sharing one file never both consume a decision.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import ApprovalError, StorageError
from lightagent.keywords import seeds_keywords

from lightagent_review.models import ApprovalDecision, ApprovalRequest, HumanFeedback

__all__ = ["InMemoryReviewStore", "JsonReviewStore", "ReviewStore"]


@runtime_checkable
class ReviewStore(Protocol):
    """Where approval requests wait, decisions are recorded and consumed once, feedback is kept."""

    def create_request(self, request: ApprovalRequest) -> ApprovalRequest: ...
    def create_batch(self, requests: Iterable[ApprovalRequest]) -> list[ApprovalRequest]: ...
    def get_request(self, request_id: str) -> ApprovalRequest | None: ...
    def resolve(self, request_id: str, decision: ApprovalDecision) -> ApprovalDecision: ...
    def resolve_batch(
        self,
        decisions: Mapping[str, ApprovalDecision] | Iterable[str],
        decision: ApprovalDecision | None = None,
    ) -> list[ApprovalDecision]: ...
    def get_decision(self, request_id: str) -> ApprovalDecision | None: ...
    def consume(self, request_id: str) -> ApprovalDecision: ...
    def list_pending(self) -> list[ApprovalRequest]: ...
    def add_feedback(self, feedback: HumanFeedback) -> HumanFeedback: ...
    def list_feedback(self, trace_id: str | None = None) -> list[HumanFeedback]: ...


def _empty() -> dict[str, Any]:
    return {"version": 1, "requests": {}, "decisions": {}, "consumed": {}, "feedback": []}


class _StateStore:
    """Store operations over a state dict; subclasses provide :meth:`_state` transactions."""

    def _state(self, write: bool) -> contextlib.AbstractContextManager[dict[str, Any]]:
        raise NotImplementedError

    def create_request(self, request: ApprovalRequest) -> ApprovalRequest:
        """Store a pending request (idempotent by request id)."""
        with self._state(True) as state:
            state["requests"].setdefault(request.request_id, request.to_dict())
        return request

    def create_batch(self, requests: Iterable[ApprovalRequest]) -> list[ApprovalRequest]:
        """Store several requests under one batch id, in one write."""
        items = list(requests)
        batch = items[0].batch_id if items and items[0].batch_id else os.urandom(8).hex()
        with self._state(True) as state:
            for request in items:
                request.batch_id = request.batch_id or batch
                state["requests"].setdefault(request.request_id, request.to_dict())
        return items

    def get_request(self, request_id: str) -> ApprovalRequest | None:
        """The request, or None."""
        with self._state(False) as state:
            data = state["requests"].get(request_id)
        return ApprovalRequest.from_dict(data) if data else None

    @seeds_keywords(id="request_id")
    def resolve(self, request_id: str, decision: ApprovalDecision) -> ApprovalDecision:
        """Record the decision for a pending request; deciding twice is an error."""
        if not decision.decided:
            raise ApprovalError("LA-APPROVAL", "a pending decision cannot resolve a request")
        with self._state(True) as state:
            request = state["requests"].get(request_id)
            if request is None:
                raise ApprovalError(
                    "LA-APPROVAL",
                    f"no approval request {request_id!r}",
                    details={"request_id": request_id},
                )
            if decision.action not in request["allowed_decisions"]:
                raise ApprovalError(
                    "LA-APPROVAL",
                    f"decision {decision.action!r} is not allowed for this request",
                    details={"allowed": request["allowed_decisions"]},
                )
            if request_id in state["decisions"]:
                raise ApprovalError(
                    "LA-APPROVAL",
                    f"request {request_id!r} is already decided",
                    details={"request_id": request_id},
                )
            decision.request_id = request_id
            state["decisions"][request_id] = decision.to_dict()
        return decision

    def resolve_batch(
        self,
        decisions: Mapping[str, ApprovalDecision] | Iterable[str],
        decision: ApprovalDecision | None = None,
    ) -> list[ApprovalDecision]:
        """Resolve many requests: a mapping id -> decision, or ids plus one decision (a batch id expands)."""
        if isinstance(decisions, Mapping):
            pairs = list(decisions.items())
        else:
            if decision is None:
                raise ApprovalError("LA-APPROVAL", "resolve_batch(ids) needs decision=")
            ids: list[str] = []
            with self._state(False) as state:
                for key in decisions:
                    members = [r for r, d in state["requests"].items() if d.get("batch_id") == key]
                    ids.extend(members or [key])
            pairs = [
                (rid, ApprovalDecision.from_dict({**decision.to_dict(), "request_id": None}))
                for rid in ids
            ]
        return [self.resolve(rid, d) for rid, d in pairs]

    def get_decision(self, request_id: str) -> ApprovalDecision | None:
        """The recorded decision, or None while pending."""
        with self._state(False) as state:
            data = state["decisions"].get(request_id)
        return ApprovalDecision.from_dict(data) if data else None

    def is_consumed(self, request_id: str) -> bool:
        """Whether the decision was already used."""
        with self._state(False) as state:
            return request_id in state["consumed"]

    def consume(self, request_id: str) -> ApprovalDecision:
        """Use the decision once: ``LA-APPROVAL-PENDING`` without one, ``LA-APPROVAL-REPLAY`` the second time."""
        with self._state(True) as state:
            data = state["decisions"].get(request_id)
            if data is None:
                raise ApprovalError(
                    "LA-APPROVAL-PENDING",
                    f"request {request_id!r} has no decision yet",
                    details={"request_id": request_id},
                )
            if request_id in state["consumed"]:
                raise ApprovalError(
                    "LA-APPROVAL-REPLAY",
                    f"the decision for {request_id!r} was already used",
                    details={"request_id": request_id},
                )
            state["consumed"][request_id] = time.time()
        return ApprovalDecision.from_dict(data)

    def list_pending(self) -> list[ApprovalRequest]:
        """Requests without a decision, oldest first."""
        with self._state(False) as state:
            items = [d for r, d in state["requests"].items() if r not in state["decisions"]]
        return sorted((ApprovalRequest.from_dict(d) for d in items), key=lambda r: r.created_at)

    def add_feedback(self, feedback: HumanFeedback) -> HumanFeedback:
        """Keep a piece of human feedback."""
        with self._state(True) as state:
            state["feedback"].append(feedback.to_dict())
        return feedback

    def list_feedback(self, trace_id: str | None = None) -> list[HumanFeedback]:
        """Feedback, optionally for one trace."""
        with self._state(False) as state:
            items = list(state["feedback"])
        return [
            HumanFeedback.from_dict(d)
            for d in items
            if trace_id is None or d.get("trace_id") == trace_id
        ]


class InMemoryReviewStore(_StateStore):
    """A review store in this process's memory (thread-safe)."""

    def __init__(self) -> None:
        self._data = _empty()
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def _state(self, write: bool) -> Iterator[dict[str, Any]]:
        with self._lock:
            yield self._data


class JsonReviewStore(_StateStore):
    """A review store in one JSON file, safe across processes (file lock + atomic replace)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError("LA-STORAGE", f"cannot create {self.path.parent}: {exc}") from exc
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._thread_lock = threading.RLock()

    @contextlib.contextmanager
    def _state(self, write: bool) -> Iterator[dict[str, Any]]:
        with self._thread_lock, self._file_lock():
            state = self._read()
            yield state
            if write:
                self._write(state)

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX: the thread lock only
            yield
            return
        with open(self._lock_path, "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return _empty()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError) as exc:
            raise StorageError(
                "LA-STORAGE-CORRUPT",
                f"{self.path} is not a readable review store: {type(exc).__name__}",
                details={"path": str(self.path)},
            ) from exc
        state = _empty()
        if isinstance(data, dict):
            state.update({k: v for k, v in data.items() if k in state})
        return state

    def _write(self, state: dict[str, Any]) -> None:
        text = json.dumps(state, ensure_ascii=False, sort_keys=True, default=str)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise StorageError("LA-STORAGE", f"cannot write {self.path}: {exc}") from exc
