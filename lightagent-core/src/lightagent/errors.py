"""Typed errors with stable ``LA-…`` codes, a one-line hint and structured details."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ERROR_TAXONOMY",
    "ApprovalError",
    "BudgetError",
    "CancelledError",
    "ConfigurationError",
    "ErrorInfo",
    "LightAgentError",
    "ModelError",
    "PluginError",
    "PolicyError",
    "StorageError",
    "ToolError",
    "ValidationError",
    "classify_exception",
]


@dataclass(frozen=True)
class ErrorInfo:
    """What a code means and the one-line hint shown with it."""

    code: str
    family: str
    message: str
    hint: str


def _info(code: str, family: str, message: str, hint: str) -> tuple[str, ErrorInfo]:
    return code, ErrorInfo(code, family, message, hint)


# Codes are public and stable: add freely, never rename or reuse one.
ERROR_TAXONOMY: dict[str, ErrorInfo] = dict(
    [
        # The seeds' provider codes (HTTP status of the model endpoint).
        _info(
            "LA-400",
            "model",
            "The model endpoint rejected the request.",
            "Check the model name, message shapes and tool schemas sent.",
        ),
        _info(
            "LA-401",
            "model",
            "The model endpoint refused the credentials.",
            "Set OPENAI_API_KEY or pass api_key=; check it belongs to base_url.",
        ),
        _info(
            "LA-403",
            "model",
            "The model endpoint denied access.",
            "Check the key's permissions for this model and region.",
        ),
        _info(
            "LA-404",
            "model",
            "The model or endpoint was not found.",
            "Check model= and base_url= (most servers end in /v1).",
        ),
        _info(
            "LA-408",
            "model",
            "The model request timed out.",
            "Raise the timeout or retry; check the server is reachable.",
        ),
        _info(
            "LA-413",
            "model",
            "The request is too large for the model.",
            "Trim history, use filter_tools, or use a model with a larger context.",
        ),
        _info(
            "LA-429",
            "model",
            "The model endpoint is rate limiting.",
            "Lower concurrency or raise max_retry; Retry-After is honoured.",
        ),
        _info(
            "LA-500",
            "model",
            "The model endpoint failed.",
            "Retry later; the failure is on the provider side.",
        ),
        _info(
            "LA-503",
            "model",
            "The model endpoint is unavailable.",
            "Retry later or switch base_url to a healthy endpoint.",
        ),
        _info(
            "LA-PROVIDER",
            "model",
            "The model provider failed.",
            "Check the provider's logs and the request in the trace.",
        ),
        _info(
            "LA-TRUNCATED",
            "model",
            "The model stream ended without a finish.",
            "The connection dropped mid-answer; retry the run.",
        ),
        _info(
            "LA-MODEL-OUTPUT",
            "model",
            "The model output could not be used.",
            "Check the provider profile; the raw output is in details.",
        ),
        _info(
            "LA-JSON",
            "validation",
            "A value is not valid JSON.",
            "Send a JSON object that matches the schema.",
        ),
        _info(
            "LA-VALIDATION",
            "validation",
            "A value does not match its schema.",
            "Fix the fields named in details.",
        ),
        _info(
            "LA-CONFIG",
            "validation",
            "The configuration is invalid.",
            "Fix the argument named in the message.",
        ),
        _info(
            "LA-TOOL",
            "tool",
            "A tool call failed.",
            "Check the tool name and arguments; the error is in details.",
        ),
        _info(
            "LA-TOOL-NOT-FOUND",
            "tool",
            "The model called a tool that is not available.",
            "Register the tool or pass it with tools=.",
        ),
        _info(
            "LA-TOOL-ARGS",
            "tool",
            "The tool arguments do not match its schema.",
            "The model is told the schema error and may retry.",
        ),
        _info(
            "LA-TOOL-TIMEOUT",
            "tool",
            "The tool did not finish in time.",
            "Raise the tool's timeout or make it faster.",
        ),
        _info(
            "LA-TOOL-DEFINITION",
            "tool",
            "A tool definition is invalid.",
            "Run ToolRegistry.validate_tools() and fix what it lists.",
        ),
        _info(
            "LA-EXPRESSION",
            "validation",
            "The expression is not allowed by safe_expression.",
            "Use only numbers, strings, arithmetic, comparisons and literals.",
        ),
        _info(
            "LA-SANDBOX",
            "policy",
            "Code execution is not allowed here.",
            "Use safe_expression or an isolated tool of your own.",
        ),
        _info(
            "LA-GUARDRAIL",
            "policy",
            "A guardrail blocked the request.",
            "See the guardrail's reason; change the input or the rule.",
        ),
        _info(
            "LA-HOOK",
            "policy",
            "A hook blocked the request.",
            "See the hook's reason in the trace.",
        ),
        _info(
            "LA-POLICY",
            "policy",
            "The policy denied the operation.",
            "Grant the capability or ask for approval.",
        ),
        _info(
            "LA-APPROVAL",
            "policy",
            "The operation needs or failed an approval.",
            "Resolve the pending approval request, then resume.",
        ),
        _info(
            "LA-APPROVAL-PENDING",
            "policy",
            "The operation waits for a human decision.",
            "Resolve the request named in details, then rerun with approval_id=.",
        ),
        _info(
            "LA-APPROVAL-REPLAY",
            "policy",
            "The approval was already used.",
            "Approvals are single-use; ask for a new one.",
        ),
        _info(
            "LA-APPROVAL-EXPIRED",
            "policy",
            "The approval has expired.",
            "Ask for a new approval; raise ttl_seconds if reviews take longer.",
        ),
        _info(
            "LA-APPROVAL-MISMATCH",
            "policy",
            "The approval does not fit this operation.",
            "Approvals bind operation, arguments, tenant, project, run and resource; ask for a new one.",
        ),
        _info(
            "LA-APPROVAL-TIMEOUT",
            "policy",
            "No reviewer decided in time.",
            "Raise the reviewer timeout or resolve the request later.",
        ),
        _info(
            "LA-APPROVAL-KEY",
            "policy",
            "No approval signing key is configured.",
            "Set LIGHTAGENT_APPROVAL_KEY or pass key= (at least 16 bytes).",
        ),
        _info(
            "LA-PERMISSION-WIDEN",
            "policy",
            "A narrowing asked for more than the parent holds.",
            "A child context can only drop permissions; request what the parent has.",
        ),
        _info(
            "LA-HOOK-INVALID",
            "validation",
            "A hook or its result is invalid.",
            "Return None, True, False, a reason string, a dict or a HookDecision.",
        ),
        _info(
            "LA-HOOK-TIMEOUT",
            "policy",
            "A policy hook did not answer in time.",
            "Raise PolicyHook(timeout=) or make the handler faster.",
        ),
        _info(
            "LA-GUARDRAIL-ERROR",
            "policy",
            "A guardrail failed and the request was blocked.",
            "Fix the guardrail; deciders fail closed.",
        ),
        _info(
            "LA-BUDGET",
            "budget",
            "A budget was exhausted.",
            "Raise the limit in BudgetLimits or lower the work.",
        ),
        _info(
            "LA-MAX-ITERATIONS",
            "budget",
            "The tool loop reached max_tool_iterations.",
            "Raise max_tool_iterations or simplify the task.",
        ),
        _info(
            "LA-CANCELLED",
            "budget",
            "The run was cancelled.",
            "A CancellationToken was triggered; start a new run.",
        ),
        _info(
            "LA-SESSION",
            "storage",
            "The session store failed.",
            "Check the store path or URL and its permissions.",
        ),
        _info(
            "LA-STORAGE",
            "storage",
            "A store operation failed.",
            "Check the store path or URL and its permissions.",
        ),
        _info(
            "LA-STORAGE-CONFLICT",
            "storage",
            "Another writer appended first.",
            "Reload the latest sequence and retry the append.",
        ),
        _info(
            "LA-STORAGE-CORRUPT",
            "storage",
            "Stored data is corrupt.",
            "Use the salvage path named in details; nothing was skipped.",
        ),
        _info(
            "LA-STORAGE-UNAVAILABLE",
            "storage",
            "The database is not reachable.",
            "Check the URL and that the server is running.",
        ),
        _info(
            "LA-PLUGIN",
            "plugin",
            "A plugin failed to load.",
            "Run `lightagent plugins` to see the failure; upgrade or disable it.",
        ),
        _info(
            "LA-PLUGIN-CONFLICT",
            "plugin",
            "Two plugins registered the same provider name.",
            "Uninstall or disable one of the two plugins named.",
        ),
        _info(
            "LA-PLUGIN-VERSION",
            "plugin",
            "A plugin does not support this lightagent-core.",
            "Upgrade the plugin or install a core version it admits.",
        ),
        _info(
            "LA-PROVIDER-NOT-FOUND",
            "plugin",
            "No provider is registered under that name.",
            "Install the plugin that provides it; `lightagent plugins` lists them.",
        ),
        _info(
            "LA-MISSING-EXTRA",
            "plugin",
            "An optional dependency is not installed.",
            "Install the extra named in the message.",
        ),
        # LightDAG (lightagent-dag): the seeds' LA-DAG-… codes plus our own.
        _info(
            "LA-DAG",
            "dag",
            "A LightDAG operation failed.",
            "See the message and details; `lightagent dag status RUN_ID` shows the run.",
        ),
        _info(
            "LA-DAG-ARTIFACT-INTEGRITY",
            "dag",
            "A stored artifact does not match its hash or size.",
            "The blob was changed on disk; restore it or rerun the task.",
        ),
        _info(
            "LA-DAG-ARTIFACT-PATH",
            "dag",
            "An artifact path or scope is unsafe.",
            "Use plain tenant/project names; symlinks and '..' are refused.",
        ),
        _info(
            "LA-DAG-ARTIFACT-TOO-LARGE",
            "dag",
            "A candidate artifact is larger than max_artifact_bytes.",
            "Raise DAGConfig.max_artifact_bytes or make the worker's output smaller.",
        ),
        _info(
            "LA-DAG-BUDGET-EXHAUSTED",
            "dag",
            "A LightDAG limit was reached.",
            "Raise the DAGConfig limit named in details, or give the run less work.",
        ),
        _info(
            "LA-DAG-CONTEXT-OVERFLOW",
            "dag",
            "The task context is larger than its budget.",
            "Raise the context budget or pass fewer dependency artifacts.",
        ),
        _info(
            "LA-DAG-CYCLE",
            "dag",
            "The task graph has a dependency cycle.",
            "Remove the cycle named in details.",
        ),
        _info(
            "LA-DAG-FENCED",
            "dag",
            "This attempt was fenced out: its lease was taken over.",
            "Nothing was written; the task continues under the newer attempt.",
        ),
        _info(
            "LA-DAG-IDEMPOTENCY-CONFLICT",
            "dag",
            "The id is already used with different content.",
            "Use a new run_id, or resend exactly the same tasks.",
        ),
        _info(
            "LA-DAG-IDENTITY-REQUIRED",
            "dag",
            "A LightDAG run needs a tenant and a project.",
            "Pass context=SecurityContext(tenant_id=..., project_id=...).",
        ),
        _info(
            "LA-DAG-INVALID",
            "dag",
            "A task spec or argument is invalid.",
            "Fix the field named in the message.",
        ),
        _info(
            "LA-DAG-LEASE-REJECTED",
            "dag",
            "Another scheduler holds this run's lease.",
            "Wait for it to finish or for its lease to expire.",
        ),
        _info(
            "LA-DAG-NOT-FOUND",
            "dag",
            "No such LightDAG run or task.",
            "Check the run_id and task_id; `lightagent dag status` lists tasks.",
        ),
        _info(
            "LA-DAG-RECOVERY-CONFIG-MISMATCH",
            "dag",
            "A worker key of the run is not registered here.",
            "Register every worker_key the run uses before running it.",
        ),
        _info(
            "LA-DAG-SCHEMA-MISMATCH",
            "dag",
            "The store's schema version is not supported.",
            "Upgrade lightagent-dag or use a store created by this version.",
        ),
        _info(
            "LA-DAG-STALE-ATTEMPT",
            "dag",
            "The attempt is no longer the task's active attempt.",
            "Nothing was written; the task continues under the newer attempt.",
        ),
        _info(
            "LA-DAG-STATE",
            "dag",
            "The run or task is not in a state that allows this.",
            "Check its status first; the message names the state found.",
        ),
        _info(
            "LA-DAG-UNKNOWN-DEPENDENCY",
            "dag",
            "A task depends on a task that does not exist.",
            "Add the task or remove the dependency named in details.",
        ),
        _info(
            "LA-DAG-VERIFICATION-FAILED",
            "dag",
            "The verifier rejected the candidate.",
            "See the verifier's diagnostics in the task's last_error.",
        ),
        _info(
            "LA-DAG-VERIFIER-UNAVAILABLE",
            "dag",
            "A verifier key of the run is not registered here.",
            "Register every verifier_key the run uses before running it.",
        ),
        _info(
            "LA-DAG-VERSION-CONFLICT",
            "dag",
            "The graph changed since the revision you read.",
            "Reload the run, check graph_revision, and retry.",
        ),
        _info(
            "LA-DAG-WORKER-PROTOCOL",
            "dag",
            "A worker returned something that is not a TaskOutcome.",
            "Return TaskOutcome.candidate/decompose/blocked, or its JSON form.",
        ),
        # LightFlow (lightagent-flow): the seeds' LA-FLOW-AGENT-ERROR / LA-FLOW-TIMEOUT plus our own.
        _info(
            "LA-FLOW-AGENT-ERROR",
            "flow",
            "A flow step's agent failed.",
            "See the step's error; raise max_retry or set fallback_agent.",
        ),
        _info(
            "LA-FLOW-TIMEOUT",
            "flow",
            "A flow step did not finish within its timeout.",
            "Raise the step's timeout or make its agent faster.",
        ),
        _info(
            "LA-FLOW-CYCLE",
            "validation",
            "The flow's dependencies form a cycle.",
            "Remove one depends_on edge of the cycle named in details.",
        ),
        _info(
            "LA-FLOW-UNKNOWN-DEPENDENCY",
            "validation",
            "A step depends on a step that does not exist.",
            "Add the step or fix the name in depends_on.",
        ),
        _info(
            "LA-FLOW-DUPLICATE-STEP",
            "validation",
            "Two steps have the same name.",
            "Give every step a unique name.",
        ),
        _info(
            "LA-FLOW-ISOLATED-STEP",
            "validation",
            "A step neither depends on nor feeds another step.",
            "Connect it with depends_on, or validate with strict=False.",
        ),
        _info(
            "LA-FLOW-EMPTY",
            "validation",
            "The flow has no steps.",
            "Add steps with flow.step(name, agent=...).",
        ),
        _info(
            "LA-FLOW-STEP",
            "validation",
            "A step option is invalid.",
            "Fix the step option named in the message.",
        ),
        _info(
            "LA-FLOW-RUN-ID",
            "validation",
            "The run id is not a safe identifier.",
            "Use letters, digits, '_', '-' and '.', at most 128 characters.",
        ),
        _info(
            "LA-FLOW-RUN-NOT-FOUND",
            "validation",
            "No flow run has that id.",
            "Check the run_id; flow.list_runs() lists the stored runs.",
        ),
        _info(
            "LA-FLOW-RUN-EXISTS",
            "validation",
            "The run id is already used with another query.",
            "Use a new run_id, or resume() the existing run.",
        ),
        _info(
            "LA-FLOW-RUN-ACTIVE",
            "validation",
            "The run is already executing in this process.",
            "Wait for it to finish or cancel it first.",
        ),
        _info(
            "LA-FLOW-MISMATCH",
            "validation",
            "The stored run was made by a flow with other steps.",
            "Resume it with the flow that started it (same step names and depends_on).",
        ),
        _info(
            "LA-FLOW-APPROVAL",
            "policy",
            "The approval decision does not fit the step.",
            "Approve only steps with requires_approval; use approve, reject, edit or respond.",
        ),
        _info(
            "LA-UNKNOWN",
            "unknown",
            "An unexpected error occurred.",
            "See details; report it if it persists.",
        ),
    ]
)


class LightAgentError(Exception):
    """Base of every lightagent error: a stable ``code``, a ``message``, a one-line ``hint`` and ``details``.

    ``LightAgentError("LA-TOOL", "boom")`` follows the seeds' signature; subclasses
    accept a bare message (``ToolError("boom")``) and use their family's default code.
    """

    default_code = "LA-UNKNOWN"
    family = "unknown"

    def __init__(
        self,
        code: str | None = None,
        message: str | None = None,
        guidance: str | None = None,
        details: dict[str, Any] | None = None,
        *,
        hint: str | None = None,
    ) -> None:
        if code is not None and not code.startswith("LA-") and message is None:
            code, message = None, code
        code = code or self.default_code
        info = ERROR_TAXONOMY.get(code)
        if info is None and not code.startswith("LA-"):
            code, info = "LA-UNKNOWN", ERROR_TAXONOMY["LA-UNKNOWN"]
        self.code: str = code
        self.message: str = message or (info.message if info else code)
        self.hint: str = hint or guidance or (info.hint if info else "")
        self.details: dict[str, Any] = dict(details or {})
        super().__init__(self.message)

    @property
    def guidance(self) -> str:
        """The seeds' name for :attr:`hint`."""
        return self.hint

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        return f"{text} Hint: {self.hint}" if self.hint else text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form for results, traces and events."""
        return {
            "code": self.code,
            "type": type(self).__name__,
            "message": self.message,
            "hint": self.hint,
            "details": self.details,
        }


class ModelError(LightAgentError):
    """The model endpoint failed, refused, or produced output that cannot be used."""

    default_code = "LA-PROVIDER"
    family = "model"

    @property
    def status_code(self) -> int | None:
        """The HTTP status of the endpoint, when there was one."""
        value = self.details.get("status_code")
        return int(value) if value is not None else None


class ToolError(LightAgentError):
    """A tool is missing, invalid, failed, or timed out."""

    default_code = "LA-TOOL"
    family = "tool"


class ValidationError(LightAgentError):
    """An argument, schema or configuration value is invalid."""

    default_code = "LA-VALIDATION"
    family = "validation"


class ConfigurationError(ValidationError):
    """A constructor or call argument is invalid."""

    default_code = "LA-CONFIG"


class PolicyError(LightAgentError):
    """A guardrail, hook, policy or gate denied an operation."""

    default_code = "LA-POLICY"
    family = "policy"


class ApprovalError(PolicyError):
    """An operation needs approval, or the approval given does not fit it."""

    default_code = "LA-APPROVAL"


class BudgetError(LightAgentError):
    """A budget, an iteration limit or a deadline was exhausted."""

    default_code = "LA-BUDGET"
    family = "budget"


class CancelledError(BudgetError):
    """The run was cancelled through its :class:`CancellationToken`."""

    default_code = "LA-CANCELLED"


class StorageError(LightAgentError):
    """A store failed, conflicted with another writer, or found corrupt data."""

    default_code = "LA-STORAGE"
    family = "storage"


class PluginError(LightAgentError):
    """A plugin failed to load, conflicts with another, or is missing."""

    default_code = "LA-PLUGIN"
    family = "plugin"


_STATUS_CODES = {400, 401, 403, 404, 408, 413, 429, 500, 503}


def classify_exception(exc: BaseException, default_code: str = "LA-UNKNOWN") -> str:
    """The ``LA-…`` code that best describes ``exc`` (HTTP status first, then its type)."""
    if isinstance(exc, LightAgentError):
        return exc.code
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        if status in _STATUS_CODES:
            return f"LA-{status}"
        if status == 502:
            return "LA-500"
        if status == 504:
            return "LA-503"
    if isinstance(exc, TimeoutError):
        return "LA-408"
    name = type(exc).__name__.lower()
    if "timeout" in name:
        return "LA-408"
    if "json" in name:
        return "LA-JSON"
    return default_code
