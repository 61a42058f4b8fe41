"""The flow-store contract and the in-memory store used when ``LightFlow(store=None)``.

A store keeps, per run, a small *header* (query, status, the flow's shape …), one
*commit record* per step (written when that step finishes, before any dependant starts),
the persisted *approvals* and a *cancel request* flag. Records are plain JSON dicts.
``load_run`` assembles them into the seeds' checkpoint record
``{run_id, query, status, error, steps: [...], approvals: {...}, updated_at, ...}``.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import StorageError, ValidationError

__all__ = [
    "FaultHook",
    "LightFlowStore",
    "MemoryLightFlowStore",
    "assemble_record",
    "check_run_id",
    "fenced_out",
]

_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")

#: ``fault(point, run_id, step)`` — a test seam called at named points of the commit path.
FaultHook = Callable[[str, str, str], None]


def check_run_id(run_id: Any) -> str:
    """``run_id`` when it is a safe identifier, else ``LA-FLOW-RUN-ID``."""
    if not isinstance(run_id, str) or not _SAFE_ID.fullmatch(run_id) or ".." in run_id:
        raise ValidationError(
            "LA-FLOW-RUN-ID",
            f"unsafe run id {run_id!r}",
            details={"run_id": run_id if isinstance(run_id, str) else repr(run_id)},
        )
    return run_id


def assemble_record(
    header: dict[str, Any],
    steps: dict[str, dict[str, Any]],
    approvals: dict[str, dict[str, Any]],
    cancel_requested: bool,
) -> dict[str, Any]:
    """The seeds' run record from a header, step commits and approvals (steps in flow order)."""
    order = [s["name"] for s in header.get("flow") or ()]
    ordered = [steps[n] for n in order if n in steps]
    ordered.extend(v for k, v in steps.items() if k not in order)
    record = dict(header)
    record["steps"] = ordered
    record["approvals"] = dict(approvals)
    record["cancel_requested"] = cancel_requested
    return record


def fenced_out(run_id: str, epoch: int, current: int | None) -> StorageError:
    """The error of a write from a runner whose claim on ``run_id`` was taken over."""
    return StorageError(
        "LA-STORAGE-CONFLICT",
        f"run {run_id!r} was taken over (epoch {current}, this runner holds {epoch}); nothing was written",
        hint="Another process resumed this run; this runner stopped. Read it with get_run().",
        details={"run_id": run_id, "epoch": epoch, "current_epoch": current},
    )


@runtime_checkable
class LightFlowStore(Protocol):
    """What LightFlow needs from a store. Every write is durable when it returns.

    ``blocking`` tells LightFlow to call the store from a worker thread.
    """

    blocking: bool

    def save_header(self, run_id: str, header: dict[str, Any], *, epoch: int | None = None) -> None:
        """Write (replace) the run's header; with ``epoch``, only while the run's epoch is still that."""

    def claim_run(self, run_id: str) -> int:
        """Take over the run: bump and return its epoch (a fencing token).

        Every later write that carries an older epoch raises ``LA-STORAGE-CONFLICT``, so a
        runner that another process superseded (a concurrent ``resume``) can no longer
        write anything.
        """

    def commit_step(
        self, run_id: str, step: dict[str, Any], *, epoch: int | None = None
    ) -> bool | None:
        """Durably record one step's result (replacing an earlier one of the same step).

        May return whether a cancel is requested for the run (saves LightFlow a read);
        ``None`` means "not known" and LightFlow asks :meth:`cancel_requested`.
        """

    def set_approval(
        self, run_id: str, step: str, decision: dict[str, Any], *, exclusive: bool = False
    ) -> bool:
        """Persist a decision for ``step``; with ``exclusive`` only when it has none (first writer wins).

        Returns whether the decision was written.
        """

    def clear_approvals(self, run_id: str, steps: list[str]) -> None:
        """Forget the decisions of ``steps`` (a rerun needs fresh approval)."""

    def request_cancel(self, run_id: str, reason: str | None = None) -> None:
        """Ask whoever runs ``run_id`` (any process) to stop before its next step."""

    def clear_cancel(self, run_id: str) -> None:
        """Withdraw a cancel request (done when a run is resumed)."""

    def cancel_requested(self, run_id: str) -> bool:
        """Whether a cancel was requested for ``run_id``."""

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The assembled record, or ``None`` when there is no such run."""

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run's header (no steps), most recently updated first."""

    def save_run(self, run_id: str, record: dict[str, Any]) -> None:
        """Write a whole record (the seeds' API): header, steps and approvals."""


class MemoryLightFlowStore:
    """Run records in this process only (the default when no store is given)."""

    blocking = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._headers: dict[str, dict[str, Any]] = {}
        self._steps: dict[str, dict[str, dict[str, Any]]] = {}
        self._approvals: dict[str, dict[str, dict[str, Any]]] = {}
        self._cancel: set[str] = set()
        self._epochs: dict[str, int] = {}
        self._fault: FaultHook | None = None

    def _fence(self, run_id: str, epoch: int | None) -> None:
        if epoch is not None and self._epochs.get(run_id, 0) != epoch:
            raise fenced_out(run_id, epoch, self._epochs.get(run_id, 0))

    def save_header(self, run_id: str, header: dict[str, Any], *, epoch: int | None = None) -> None:
        """Write (replace) the run's header."""
        with self._lock:
            self._fence(run_id, epoch)
            self._headers[run_id] = copy.deepcopy(header)

    def claim_run(self, run_id: str) -> int:
        """Bump and return the run's epoch."""
        with self._lock:
            self._epochs[run_id] = self._epochs.get(run_id, 0) + 1
            return self._epochs[run_id]

    def commit_step(self, run_id: str, step: dict[str, Any], *, epoch: int | None = None) -> bool:
        """Record one step's result; returns whether a cancel is requested."""
        with self._lock:
            self._fence(run_id, epoch)
            self._steps.setdefault(run_id, {})[step["name"]] = copy.deepcopy(step)
            return run_id in self._cancel

    def set_approval(
        self, run_id: str, step: str, decision: dict[str, Any], *, exclusive: bool = False
    ) -> bool:
        """Keep a decision for ``step`` (with ``exclusive``, only when it has none)."""
        with self._lock:
            current = self._approvals.setdefault(run_id, {})
            if exclusive and step in current:
                return False
            current[step] = copy.deepcopy(decision)
            return True

    def clear_approvals(self, run_id: str, steps: list[str]) -> None:
        """Forget the decisions of ``steps``."""
        with self._lock:
            for name in steps:
                self._approvals.get(run_id, {}).pop(name, None)

    def request_cancel(self, run_id: str, reason: str | None = None) -> None:
        """Flag ``run_id`` as cancelled."""
        with self._lock:
            self._cancel.add(run_id)

    def clear_cancel(self, run_id: str) -> None:
        """Withdraw a cancel request."""
        with self._lock:
            self._cancel.discard(run_id)

    def cancel_requested(self, run_id: str) -> bool:
        """Whether a cancel was requested for ``run_id``."""
        return run_id in self._cancel

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The assembled record (a detached copy), or ``None``."""
        with self._lock:
            header = self._headers.get(run_id)
            if header is None:
                return None
            return copy.deepcopy(
                assemble_record(
                    header,
                    self._steps.get(run_id, {}),
                    self._approvals.get(run_id, {}),
                    run_id in self._cancel,
                )
            )

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run's header, most recently updated first."""
        with self._lock:
            headers = [copy.deepcopy(h) for h in self._headers.values()]
        return sorted(headers, key=lambda h: h.get("updated_at") or 0, reverse=True)

    def save_run(self, run_id: str, record: dict[str, Any]) -> None:
        """Write a whole record."""
        header = {
            k: v for k, v in record.items() if k not in ("steps", "approvals", "cancel_requested")
        }
        self.save_header(run_id, header)
        for step in record.get("steps") or ():
            self.commit_step(run_id, step)
        for name, decision in (record.get("approvals") or {}).items():
            self.set_approval(run_id, name, decision)
