"""``agent.create_tool``: the model writes a tool; it is quarantined, checked and reviewed first.

The flow (each step its own function, the order fixed):

1. the model is asked for one Python tool function (``create_tool`` / ``acreate_tool``);
2. the source is scanned without being run (:mod:`lightagent_skills.toolgen.scan`) and put in
   quarantine whatever the verdict (:func:`~lightagent_skills.toolgen.quarantine.quarantine`);
   a refused source raises ``LA-TOOLGEN-UNSAFE`` / ``LA-TOOLGEN-SCHEMA``;
3. a review decides: a ``reviewer`` callable (a policy, or a person at a prompt) answers
   now — it may try the tool first, ``review.trial(...)``, in the sandbox — or a review
   ``store`` gets an ``ApprovalRequest`` bound to the file's hash and the tool waits,
   ``pending``, until :meth:`ToolgenMethods.register_generated_tool` is called with the
   decided request's id;
4. only then is the tool registered on the agent; each call runs the approved bytes in the
   agent's sandbox provider (``sandbox=``), never in this process (``LA-SANDBOX`` without one).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from lightagent.errors import ApprovalError, ModelError, PolicyError, ValidationError

__all__ = ["ToolgenMethods"]

_CODE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


def _instructions() -> str:
    from lightagent_skills.toolgen.scan import ALLOWED_MODULES

    modules = ", ".join(sorted(m for m in ALLOWED_MODULES if m != "__future__"))
    return (
        "You write one Python tool for an AI agent. Rules:\n"
        "- exactly one public function (helpers start with _), with a docstring whose first "
        "line says what it does and an Args: section describing each parameter;\n"
        "- every parameter annotated with str, int, float, bool, list[...], dict[...], "
        "Optional[...] or Literal[...]; no *args/**kwargs; defaults are plain literals;\n"
        "- pure computation: import only from " + modules + "; no files, network, "
        "processes or system access; no classes, decorators, global or code at module level "
        "(only imports, literal constants and functions);\n"
        "- no names, attributes or strings with '__', no getattr/type/eval/open, no "
        "operator.attrgetter; build text with f-strings;\n"
        "- reply with the module in one ```python block."
    )


def _source_of(response: Any) -> str:
    text = getattr(response, "content", None) or ""
    match = _CODE.search(text)
    source = match.group(1) if match else text
    if not source.strip():
        raise ModelError(
            "LA-TOOLGEN-OUTPUT",
            "the model's answer holds no Python source for the tool",
            details={"content": text[:2000]},
        )
    return source


def _request(user_input: str) -> Any:
    from lightagent.models.base import ModelRequest

    if not isinstance(user_input, str) or not user_input.strip():
        raise ValidationError("LA-CONFIG", "create_tool needs a description of the tool")
    return ModelRequest(
        messages=[
            {"role": "system", "content": _instructions()},
            {"role": "user", "content": user_input},
        ]
    )


def _decision(reviewer: Any, review: Any, request_id: str | None) -> Any:
    from lightagent.bridge import resolve_sync
    from lightagent.review.models import ApprovalDecision

    return ApprovalDecision.coerce(resolve_sync(reviewer(review)), request_id)


class ToolgenMethods:
    """Mixed into the agent's :class:`~lightagent_skills.part.SkillsPart`: ``create_tool``,
    ``acreate_tool``, ``register_generated_tool``, ``load_generated_tool``."""

    #: The ``LightAgent`` this part belongs to (its model writes, its registry gets, the tools).
    agent: Any
    sandbox: Any

    def _sandbox(self) -> Any:
        """The sandbox provider generated tools run in (``LA-SANDBOX`` when there is none)."""
        from lightagent_skills.toolgen.runner import require_sandbox

        return require_sandbox(self.sandbox)

    @property
    def _toolgen_timeout(self) -> float:
        # the agent's tool_timeout= (its calls' bound), else a minute
        return getattr(self.agent, "_tool_timeout", None) or 60.0

    def create_tool(
        self,
        user_input: str,
        tools_directory: str | Path = "tools",
        *,
        reviewer: Any = None,
        store: Any = None,
    ) -> Any:
        """Have the model write a tool for ``user_input``; returns a ``GeneratedTool``.

        ``reviewer(review) -> True | False | ApprovalDecision`` decides at once (a policy or
        a person); with ``store`` (a review store) the decision is recorded there, or —
        without a reviewer — requested there and awaited (status ``pending``). Registering
        the tool needs the agent's ``sandbox=`` (``LA-SANDBOX``, before the model is asked).
        """
        if reviewer is not None:
            self._sandbox()
        source = _source_of(self.agent.model.complete(_request(user_input)))
        return self._review_source(source, tools_directory, reviewer, store)

    async def acreate_tool(
        self,
        user_input: str,
        tools_directory: str | Path = "tools",
        *,
        reviewer: Any = None,
        store: Any = None,
    ) -> Any:
        """Async :meth:`create_tool` (files and the review run in a worker thread)."""
        import asyncio

        if reviewer is not None:
            self._sandbox()
        source = _source_of(await self.agent.model.acomplete(_request(user_input)))
        return await asyncio.to_thread(
            self._review_source, source, tools_directory, reviewer, store
        )

    def _review_source(
        self, source: str, tools_directory: str | Path, reviewer: Any, store: Any
    ) -> Any:
        from lightagent.review.models import ApprovalRequest

        from lightagent_skills.toolgen.quarantine import (
            GeneratedTool,
            ToolReview,
            digest,
            quarantine,
        )
        from lightagent_skills.toolgen.scan import scan_source

        report = scan_source(source)
        path = quarantine(source, tools_directory, report)
        sha256 = digest(source.encode("utf-8"))
        if not report.ok or report.signature is None:
            unsafe = bool(report.unsafe)
            error_type = PolicyError if unsafe else ValidationError
            raise error_type(
                "LA-TOOLGEN-UNSAFE" if unsafe else "LA-TOOLGEN-SCHEMA",
                f"the generated tool was refused ({len(report.findings)} finding(s)); "
                f"first: {report.findings[0].message}",
                details={
                    "findings": [f.to_dict() for f in report.findings],
                    "path": str(path),
                    "sha256": sha256,
                },
            )
        signature = report.signature.to_dict()
        name = report.signature.name
        request_id = None
        if store is not None:
            request = ApprovalRequest(
                action="create_tool",
                action_name=f"create_tool:{name}",
                arguments={"name": name, "sha256": sha256, "path": str(path)},
                allowed_decisions=("approve", "reject"),
                reason="a model-written tool waits for review before it can run",
                metadata={"signature": signature},
            )
            store.create_request(request)
            request_id = request.request_id
        record = GeneratedTool(name, str(path), sha256, "pending", signature, request_id)
        if reviewer is None:
            return record
        review = ToolReview(
            name,
            source,
            sha256,
            str(path),
            signature,
            request_id or "",
            self.sandbox,
            self._toolgen_timeout,
        )
        decision = _decision(reviewer, review, request_id)
        if store is not None and decision.decided:
            store.resolve(request_id, decision)
            decision = store.consume(request_id)
        return self._settle(record, decision, tools_directory, reviewer="reviewer")

    def register_generated_tool(
        self,
        tool: Any,
        *,
        approval_id: str | None = None,
        store: Any = None,
        reviewer: Any = None,
        tools_directory: str | Path | None = None,
    ) -> Any:
        """Register a quarantined tool (a ``GeneratedTool`` or its path) once it is approved.

        With ``approval_id`` and ``store``: the request must be decided ``approve`` and be
        for this file's current hash (``LA-TOOLGEN-HASH`` if the file changed since); the
        approval is used up. With ``reviewer``: it decides now.
        """
        from lightagent_skills.toolgen.quarantine import GeneratedTool, ToolReview, digest
        from lightagent_skills.toolgen.scan import scan_source

        if approval_id is None and reviewer is None:
            raise ApprovalError(
                "LA-APPROVAL",
                "a generated tool is registered only after review",
                hint="Pass approval_id= with store=, or reviewer=.",
            )
        self._sandbox()  # before an approval is used up
        path = Path(getattr(tool, "path", tool))
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ValidationError(
                "LA-TOOLGEN-SCHEMA",
                f"the generated tool's file cannot be read: {exc}",
                details={"path": str(path)},
            ) from exc
        sha256 = digest(data)
        report = scan_source(data.decode("utf-8", "replace"))
        if not report.ok:
            raise PolicyError(
                "LA-TOOLGEN-UNSAFE" if report.unsafe else "LA-TOOLGEN-SCHEMA",
                f"{path.name} does not pass the scan: {report.findings[0].message}",
                details={"findings": [f.to_dict() for f in report.findings], "path": str(path)},
            )
        folder = Path(tools_directory) if tools_directory is not None else path.parent.parent
        name = getattr(tool, "name", None) or path.stem.rsplit("-", 1)[0]
        record = GeneratedTool(name, str(path), sha256, "pending", getattr(tool, "signature", {}))
        if approval_id is not None:
            if store is None:
                raise ApprovalError("LA-APPROVAL", "approval_id= needs the review store= it is in")
            request = store.get_request(approval_id)
            if request is None or request.action != "create_tool":
                raise ApprovalError("LA-APPROVAL", f"{approval_id} is not a create_tool request")
            approved_for = (request.arguments or {}).get("sha256")
            if approved_for != sha256:
                raise PolicyError(
                    "LA-TOOLGEN-HASH",
                    f"{path.name} changed since review request {approval_id} was made; not registered",
                    details={"approved_sha256": approved_for, "sha256": sha256},
                )
            if store.get_decision(approval_id) is None:
                raise ApprovalError(
                    "LA-APPROVAL-PENDING",
                    f"review request {approval_id} is still pending",
                    details={"request_id": approval_id},
                )
            record.request_id = approval_id
            return self._settle(
                record, store.consume(approval_id), folder, reviewer="store", data=data
            )
        review = ToolReview(
            name,
            data.decode("utf-8", "replace"),
            sha256,
            str(path),
            record.signature,
            sandbox=self.sandbox,
            timeout=self._toolgen_timeout,
        )
        return self._settle(
            record, _decision(reviewer, review, None), folder, reviewer="reviewer", data=data
        )

    def _settle(
        self,
        record: Any,
        decision: Any,
        tools_directory: str | Path,
        *,
        reviewer: str,
        data: bytes | None = None,
    ) -> Any:
        from lightagent_skills.toolgen.quarantine import install

        if not decision.decided:
            return record
        if decision.action != "approve":
            raise PolicyError(
                "LA-TOOLGEN-REJECTED",
                f"the generated tool {record.name} was rejected: {decision.reason or 'no reason given'}",
                details={
                    "path": record.path,
                    "sha256": record.sha256,
                    "request_id": record.request_id,
                },
            )
        if data is None:
            data = Path(record.path).read_bytes()
        path, tool = install(
            data,
            record.sha256,
            tools_directory,
            {
                "request_id": record.request_id,
                "decided_by": decision.reviewer_id or reviewer,
                "reason": decision.reason,
                "approved_at": time.time(),
                "quarantined_at": record.path,
            },
            sandbox=self._sandbox(),
            timeout=self._toolgen_timeout,
        )
        self.agent.tools.register_tool(tool)
        record.status, record.tool, record.path = "registered", tool, str(path)
        return record

    def load_generated_tool(self, name: str, tools_directory: str | Path = "tools") -> Any:
        """Register an installed generated tool again (its bytes checked against its approval;
        its calls run in the agent's sandbox)."""
        from lightagent_skills.toolgen.quarantine import load_installed

        tool = load_installed(
            name, tools_directory, sandbox=self._sandbox(), timeout=self._toolgen_timeout
        )
        self.agent.tools.register_tool(tool)
        return tool
