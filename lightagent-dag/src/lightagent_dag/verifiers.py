"""Verifiers: application-owned checks that alone can publish an artifact or accept a decomposition."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from lightagent_dag.errors import DAGError
from lightagent_dag.records import VerificationReport, VerificationRequest
from lightagent_dag.specs import canonical_digest
from lightagent_dag.states import AssuranceLevel, VerificationVerdict

__all__ = ["CallableVerifier", "Verifier"]


@runtime_checkable
class Verifier(Protocol):
    """Checks a candidate or a decomposition: ``key``, ``version`` and ``async verify(request)``."""

    key: str
    version: str

    async def verify(self, request: VerificationRequest) -> VerificationReport: ...


class CallableVerifier:
    """A verifier from ``fn(request)``.

    ``fn`` returns a :class:`VerificationReport`, ``True`` (pass), ``False``/``None``
    (fail), a verdict string, or a mapping ``{verdict, assurance_level, diagnostics,
    evidence_refs}``. An exception or a timeout gives verdict ``error``.
    Sync functions run in a thread (a timed-out thread cannot be stopped, but its
    verdict is ignored).

    ``inline=True`` says the check is quick and needs no slot of its own: the worker
    runs it before recording the candidate, and a pass stages and publishes in one
    transaction (one store write fewer per task). Such checks do not count against
    ``max_pending_verifications``; a failing one is staged and rejected as usual.
    """

    def __init__(
        self,
        key: str,
        fn: Callable[[VerificationRequest], Any],
        *,
        version: str = "1",
        assurance_level: str | AssuranceLevel = AssuranceLevel.EXECUTABLE_CHECKS,
        timeout: float | None = None,
        config: Mapping[str, Any] | None = None,
        inline: bool = False,
    ) -> None:
        if not isinstance(key, str) or not key:
            raise DAGError("LA-DAG-INVALID", "a verifier key must be a non-empty string")
        if not callable(fn):
            raise DAGError("LA-DAG-INVALID", f"verifier {key!r}: fn must be callable")
        if timeout is not None and timeout <= 0:
            raise DAGError("LA-DAG-INVALID", f"verifier {key!r}: timeout must be > 0")
        self.key = key
        self.fn = fn
        self.version = str(version)
        self.assurance_level = AssuranceLevel(assurance_level)
        self.timeout = timeout
        self.config = dict(config or {})
        self.config_digest = canonical_digest(self.config)
        #: Verified before staging; a pass is staged and published in one transaction.
        self.inline = bool(inline)

    async def _call(self, request: VerificationRequest) -> Any:
        if inspect.iscoroutinefunction(self.fn):
            return await self.fn(request)
        result = await asyncio.to_thread(self.fn, request)
        return await result if inspect.isawaitable(result) else result

    async def verify(self, request: VerificationRequest) -> VerificationReport:
        """Run the check and turn its answer into a report."""
        try:
            raw = await asyncio.wait_for(self._call(request), self.timeout)
        except asyncio.TimeoutError:
            return self._report(
                request,
                VerificationVerdict.ERROR,
                diagnostics=(f"verifier timed out after {self.timeout}s",),
            )
        except Exception as exc:
            return self._report(
                request,
                VerificationVerdict.ERROR,
                diagnostics=(f"{type(exc).__name__}: {str(exc)[:300]}",),
            )
        return self._normalize(request, raw)

    def _normalize(self, request: VerificationRequest, raw: Any) -> VerificationReport:
        if isinstance(raw, VerificationReport):
            return raw
        if raw is True:
            return self._report(request, VerificationVerdict.PASS)
        if raw is False or raw is None:
            return self._report(request, VerificationVerdict.FAIL)
        if isinstance(raw, str | VerificationVerdict):
            try:
                return self._report(request, VerificationVerdict(raw))
            except ValueError:
                pass
        if isinstance(raw, Mapping):
            try:
                verdict = VerificationVerdict(raw.get("verdict", "fail"))
                level = AssuranceLevel(raw.get("assurance_level", self.assurance_level))
            except ValueError as exc:
                return self._report(
                    request,
                    VerificationVerdict.ERROR,
                    diagnostics=(f"invalid verifier answer: {exc}",),
                )
            return self._report(
                request,
                verdict,
                level=level,
                diagnostics=tuple(str(d) for d in raw.get("diagnostics", ()) or ()),
                evidence=tuple(str(e) for e in raw.get("evidence_refs", ()) or ()),
            )
        return self._report(
            request,
            VerificationVerdict.ERROR,
            diagnostics=(f"verifier returned {type(raw).__name__}",),
        )

    def _report(
        self,
        request: VerificationRequest,
        verdict: VerificationVerdict,
        *,
        level: AssuranceLevel | None = None,
        diagnostics: tuple[str, ...] = (),
        evidence: tuple[str, ...] = (),
    ) -> VerificationReport:
        hashes = (request.candidate.content_hash,) if request.candidate is not None else ()
        return VerificationReport(
            kind=request.kind,
            verdict=verdict,
            assurance_level=level or self.assurance_level,
            verifier_key=self.key,
            verifier_version=self.version,
            config_digest=self.config_digest,
            input_snapshot_hash=request.input_snapshot_hash,
            artifact_hashes=hashes,
            evidence_refs=evidence,
            diagnostics=diagnostics,
        )


def as_verifier(key: str, obj: Any) -> Verifier:
    """A verifier from an object with ``verify`` or a plain callable."""
    if hasattr(obj, "verify") and callable(obj.verify):
        return obj
    if callable(obj):
        return CallableVerifier(key, obj)
    raise DAGError("LA-DAG-INVALID", f"not a verifier for {key!r}: {obj!r}")
