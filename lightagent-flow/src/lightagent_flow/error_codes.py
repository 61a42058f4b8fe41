"""LightFlow's codes: the seeds' ``LA-FLOW-AGENT-ERROR`` / ``LA-FLOW-TIMEOUT`` plus our own.

Read by lightagent through this distribution's ``lightagent.error_codes`` entry point;
stable like every code (docs/errors.md, checked by a test).
"""

from __future__ import annotations

from lightagent.error_codes import Row

__all__ = ["CODES"]

# fmt: off
CODES: tuple[Row, ...] = (
    ("LA-FLOW-AGENT-ERROR", "flow", "A flow step's agent failed.", "See the step's error; raise max_retry or set fallback_agent."),
    ("LA-FLOW-TIMEOUT", "flow", "A flow step did not finish within its timeout.", "Raise the step's timeout or make its agent faster."),
    ("LA-FLOW-CYCLE", "validation", "The flow's dependencies form a cycle.", "Remove one depends_on edge of the cycle named in details."),
    ("LA-FLOW-UNKNOWN-DEPENDENCY", "validation", "A step depends on a step that does not exist.", "Add the step or fix the name in depends_on."),
    ("LA-FLOW-DUPLICATE-STEP", "validation", "Two steps have the same name.", "Give every step a unique name."),
    ("LA-FLOW-ISOLATED-STEP", "validation", "A step neither depends on nor feeds another step.", "Connect it with depends_on, or validate with strict=False."),
    ("LA-FLOW-EMPTY", "validation", "The flow has no steps.", "Add steps with flow.step(name, agent=...)."),
    ("LA-FLOW-STEP", "validation", "A step option is invalid.", "Fix the step option named in the message."),
    ("LA-FLOW-RUN-ID", "validation", "The run id is not a safe identifier.", "Use letters, digits, '_', '-' and '.', at most 128 characters."),
    ("LA-FLOW-RUN-NOT-FOUND", "validation", "No flow run has that id.", "Check the run_id; flow.list_runs() lists the stored runs."),
    ("LA-FLOW-RUN-EXISTS", "validation", "The run id is already used with another query.", "Use a new run_id, or resume() the existing run."),
    ("LA-FLOW-RUN-ACTIVE", "validation", "The run is already executing in this process.", "Wait for it to finish or cancel it first."),
    ("LA-FLOW-MISMATCH", "validation", "The stored run was made by a flow with other steps.", "Resume it with the flow that started it (same step names and depends_on)."),
    ("LA-FLOW-APPROVAL", "policy", "The approval decision does not fit the step.", "Approve only steps with requires_approval; use approve, reject, edit or respond."),
)
# fmt: on
