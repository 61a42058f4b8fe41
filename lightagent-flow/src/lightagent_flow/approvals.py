"""Approval decisions for steps with ``requires_approval``: approve, reject, edit, respond.

A decision is stored as a plain dict ``{action, reason, query, response, reviewer_id,
request_id, decided_at}``. ``edit`` replaces the step's query; ``respond`` makes the
reviewer's response the step's output without running its agent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from lightagent.errors import ApprovalError, ValidationError

__all__ = ["ACTIONS", "from_handler", "normalize_decision", "record_decision"]

ACTIONS = ("approve", "reject", "edit", "respond")
_ALIASES = {"approved": "approve", "rejected": "reject", "deny": "reject", "denied": "reject"}


def _bad(message: str) -> ApprovalError:
    return ApprovalError("LA-FLOW-APPROVAL", message)


def _edited_query(arguments: Any, query: Any) -> str | None:
    if isinstance(query, str):
        return query
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, dict) and isinstance(arguments.get("query"), str):
        return arguments["query"]
    return None


def normalize_decision(decision: Any) -> dict[str, Any]:
    """A stored decision from ``True``/``False``, an action name, a dict or an ``ApprovalDecision``.

    Anything else, ``pending``, or an ``edit`` without a new query raises ``LA-FLOW-APPROVAL``.
    """
    if decision is True:
        data: dict[str, Any] = {"action": "approve"}
    elif decision is False:
        data = {"action": "reject"}
    elif isinstance(decision, str):
        data = {"action": decision}
    elif isinstance(decision, dict):
        data = dict(decision)
        if "action" not in data and "approved" in data:
            data["action"] = "approve" if data["approved"] else "reject"
    elif getattr(decision, "action", None) is not None:
        data = {
            "action": getattr(decision.action, "value", decision.action),
            "reason": getattr(decision, "reason", None),
            "arguments": getattr(decision, "arguments", None),
            "response": getattr(decision, "response", None),
            "reviewer_id": getattr(decision, "reviewer_id", None),
        }
    else:
        raise _bad(f"cannot read an approval decision from {type(decision).__name__}")
    action = str(data.get("action")).lower()
    action = _ALIASES.get(action, action)
    if action not in ACTIONS:
        raise _bad(f"approval action must be one of {', '.join(ACTIONS)}; got {action!r}")
    out: dict[str, Any] = {
        "action": action,
        "reason": data.get("reason"),
        "reviewer_id": data.get("reviewer_id"),
        "request_id": data.get("request_id"),
        "decided_at": data.get("decided_at") or time.time(),
    }
    if action == "edit":
        query = _edited_query(data.get("arguments"), data.get("query"))
        if query is None:
            raise _bad(
                "an edit decision needs the new step query: {'action': 'edit', 'query': '...'}"
            )
        out["query"] = query
    if action == "respond":
        response = data.get("response")
        if response is None:
            raise _bad(
                "a respond decision needs a response: {'action': 'respond', 'response': '...'}"
            )
        out["response"] = response
    return out


def from_handler(result: Any) -> dict[str, Any] | None:
    """Read an ``approval_handler`` result; ``None`` means the step waits for a human.

    As in the seeds, ``False``, a string, ``None`` or an unapproved dict leave the step
    pending (not rejected); an explicit ``reject`` action rejects.
    """
    if result is True:
        return normalize_decision("approve")
    if result is None or result is False or isinstance(result, str):
        return None
    if isinstance(result, dict):
        action = result.get("action")
        if action is None:
            if not result.get("approved"):
                return None
            return normalize_decision({**result, "action": "approve"})
        if str(action).lower() == "pending":
            return None
        return normalize_decision(result)
    action = getattr(result, "action", None)
    if action is not None:
        if str(getattr(action, "value", action)).lower() == "pending":
            return None
        return normalize_decision(result)
    return None


def record_decision(
    store: Any,
    steps: Sequence[Any],
    shape: list[dict[str, Any]],
    run_id: str,
    step: str,
    decision: Any,
) -> dict[str, Any]:
    """Check and persist a human decision for ``step`` of stored run ``run_id`` (first writer wins)."""
    from lightagent_flow._support import step_results
    from lightagent_flow.stores.base import check_run_id

    by_name = {s.name: s for s in steps}
    if step not in by_name:
        raise _bad(f"the flow has no step {step!r}")
    if not by_name[step].requires_approval:
        raise _bad(f"step {step!r} does not require approval")
    record = store.load_run(check_run_id(run_id))
    if record is None:
        raise ValidationError(
            "LA-FLOW-RUN-NOT-FOUND", f"no flow run {run_id!r}", details={"run_id": run_id}
        )
    step_results(record, shape)
    current = next((s for s in record.get("steps") or () if s["name"] == step), None)
    if current is not None and current.get("status") == "success":
        raise _bad(f"step {step!r} already succeeded; use rerun_step to run it again")
    normalized = normalize_decision(decision)
    if current is not None and current.get("status") == "waiting_approval":
        pending_id = current.get("approval_request_id")
        given = normalized.get("request_id")
        if given is not None and given != pending_id:
            raise _bad(f"decision for request {given!r}, but step {step!r} waits on {pending_id!r}")
        normalized["request_id"] = pending_id
    if not store.set_approval(run_id, step, normalized, exclusive=True):
        raise _bad(f"step {step!r} of run {run_id!r} already has a decision; the first one stands")
    return normalized
