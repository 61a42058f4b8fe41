"""Running attempts: claim, heartbeat, execute, verify, publish — and the worker pool around it.

Used both by ``LightDAG.arun`` (one run, in-process) and by ``lightagent dag worker``
(every run in the store, in a worker process). Store calls are blocking, so they run
in threads; the event loop only waits.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lightagent.blocking import run_blocking
from lightagent.errors import LightAgentError, PolicyError, StorageError

from lightagent_dag.artifacts import ArtifactStore
from lightagent_dag.errors import DAGError, DAGFencedError, DAGLimitError
from lightagent_dag.observe import attempt_data, notify
from lightagent_dag.records import Claim, ClaimRequest, VerificationReport, VerificationRequest
from lightagent_dag.specs import DAGConfig, canonical_digest
from lightagent_dag.sql.store import SqlTaskGraphStore
from lightagent_dag.states import TaskOutcomeKind, VerificationVerdict
from lightagent_dag.workers import RegistryWorkerFactory, TaskContext, normalize_task_outcome

__all__ = ["AttemptRunner", "task_capability"]

log = logging.getLogger("lightagent.dag")

# Up to this size a candidate is hashed on the event loop (a few microseconds); a larger
# one is hashed on a store thread, so that the loop never stalls on it.
_HASH_ON_LOOP_BYTES = 64 * 1024


def task_capability() -> Any:
    """The capability every attempt passes the gate with: ``dag.task.execute`` (L2, execute)."""
    from lightagent_control.capabilities import CapabilitySpec

    return CapabilitySpec(
        "dag.task.execute",
        description="Run one attempt of a LightDAG task",
        risk=2,
        execute=True,
        persistent=True,
        cancellable=True,
    )


async def _rest(seconds: float, *events: asyncio.Event | None) -> None:
    """Sleep ``seconds``, or less if one of ``events`` is set meanwhile."""
    waiters = [asyncio.ensure_future(e.wait()) for e in events if e is not None]
    if not waiters:
        await asyncio.sleep(seconds)
        return
    try:
        await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def _error(exc: BaseException) -> dict[str, Any]:
    """The error as stored (attempt, task, event): credentials redacted, fail closed."""
    from lightagent.redaction import REDACTION_FAILED, redact, redact_text

    typed = exc if isinstance(exc, LightAgentError) else None
    code = typed.code if typed is not None else "LA-DAG"
    out: dict[str, Any] = {"code": code, "type": type(exc).__name__}
    try:
        # Redact before cutting, so that a key cut in half cannot slip through.
        out["message"] = redact_text(typed.message if typed is not None else str(exc))[:500]
        if typed is not None:
            out["details"] = redact(typed.details)
    except Exception:
        out = {**out, "message": REDACTION_FAILED}
    return out


@dataclass
class AttemptRunner:
    """Everything one process needs to run attempts."""

    store: SqlTaskGraphStore
    artifact_store: ArtifactStore
    workers: RegistryWorkerFactory
    verifiers: Mapping[str, Any]
    gate: Any
    config: DAGConfig
    worker_id: str
    on_attempt: Callable[[str, Claim], None] | None = None
    audit_buffer: Any = None

    def __post_init__(self) -> None:
        self._verify_slots = asyncio.Semaphore(self.config.verification_concurrency)
        self._capability = task_capability()
        # While a pool runs: how it claims, so that an attempt's publication claims the
        # attempt's successor in its own transaction; the claims so taken wait here.
        self._claim_request: ClaimRequest | None = None
        self._preclaimed: collections.deque[Claim] = collections.deque()
        self._stop: asyncio.Event | None = None
        # What each run's stored limits and security context parse to, kept for as long
        # as the store hands out the same run record (it does while the row is unchanged).
        self._per_run: dict[tuple[str, str], tuple[Any, Any]] = {}
        #: While a pool runs on PostgreSQL: its :class:`~lightagent_dag.sql.listen.ReadyListener`.
        self.listener: Any = None
        carried = getattr(self.artifact_store, "carried_by", None)
        self._carries_blobs = bool(carried is not None and carried(self.store))

    # -- the pool ------------------------------------------------------------------

    async def pool(
        self,
        *,
        run_id: str | None = None,
        concurrency: int | None = None,
        stop: asyncio.Event | None = None,
        until_quiescent: bool = True,
        worker_keys: Sequence[str] | None = None,
    ) -> None:
        """Claim and run attempts continuously, at most ``concurrency`` at once.

        With ``run_id`` and ``until_quiescent`` it returns once the run is no longer
        ``running`` and none of its attempts runs here; otherwise it runs until ``stop``.
        """
        limit = concurrency or self.config.max_concurrency
        keys = list(worker_keys) if worker_keys is not None else self.workers.keys()
        running: set[asyncio.Task[None]] = set()
        idle = self.config.poll_interval
        next_reconcile = 0.0
        # Each finishing attempt claims at most one successor, so running + preclaimed
        # stays within the limit.
        self._claim_request = ClaimRequest(
            self.worker_id, run_id, tuple(keys), self.config.task_lease_seconds
        )
        self._stop = stop
        wake, listener = self._listen(run_id)
        self.listener = listener
        try:
            while stop is None or not stop.is_set():
                if wake is not None:
                    wake.clear()  # before looking: a commit announced from now on is not missed
                claimed = False
                looked = False  # the store was asked and had nothing to claim
                while len(running) < limit and (stop is None or not stop.is_set()):
                    if self._preclaimed:
                        claim: Claim | None = self._preclaimed.popleft()
                    else:
                        try:
                            claim = await run_blocking(
                                self.store.claim,
                                self.worker_id,
                                run_id=run_id,
                                worker_keys=keys,
                                lease_seconds=self.config.task_lease_seconds,
                            )
                        except StorageError as exc:
                            log.warning(
                                "dag worker %s: claim failed, backing off: %s", self.worker_id, exc
                            )
                            break
                    if claim is None:
                        looked = True
                        break
                    claimed = True
                    running.add(asyncio.create_task(self.run_attempt(claim)))
                if claimed:
                    idle = self.config.poll_interval
                now = time.monotonic()
                # Only a pool that found nothing to claim reconciles (a busy one would
                # spend a transaction per wake-up on it), and any pool every 5 s.
                if (looked and now >= next_reconcile) or now >= next_reconcile + 5.0:
                    next_reconcile = now + self.config.poll_interval_max
                    try:
                        await run_blocking(self.store.reconcile, run_id)
                    except StorageError as exc:
                        log.warning("dag worker %s: reconcile failed: %s", self.worker_id, exc)
                if run_id is not None and until_quiescent and not running and not self._preclaimed:
                    try:
                        run = await run_blocking(self.store.get_run, run_id)
                    except StorageError as exc:
                        log.warning("dag worker %s: status check failed: %s", self.worker_id, exc)
                    else:
                        if run is None or run.status.value != "running":
                            return
                if running:
                    # At the limit only a finishing attempt frees a slot: no polling then
                    # (the timeout only notices ``stop``).
                    full = len(running) >= limit
                    woken = None if wake is None or full else asyncio.ensure_future(wake.wait())
                    done, _ = await asyncio.wait(
                        running if woken is None else {*running, woken},
                        timeout=self.config.poll_interval_max if full else idle,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    if woken is not None:
                        woken.cancel()
                        done.discard(woken)
                    running -= done
                    for task in done:
                        task.result()  # run_attempt never raises; surface bugs if it does
                else:
                    await _rest(idle * random.uniform(0.5, 1.0), wake, stop)
                if not claimed:
                    idle = min(idle * 2, self.config.poll_interval_max)
        finally:
            if listener is not None:
                listener.close()
            self.listener = None
            self._claim_request = None
            if running:
                await asyncio.gather(*running, return_exceptions=True)
            # Claimed in a publication as the pool stopped: a claim taken is run.
            leftover = [self.run_attempt(c) for c in self._preclaimed]
            self._preclaimed.clear()
            if leftover:
                await asyncio.gather(*leftover, return_exceptions=True)

    def _listen(self, run_id: str | None) -> tuple[asyncio.Event | None, Any]:
        """On PostgreSQL: an event set when a commit announces claimable tasks (of ``run_id``)."""
        if not self.store.pg:
            return None, None
        from lightagent_dag.sql.listen import ReadyListener

        wake = asyncio.Event()
        loop = asyncio.get_running_loop()

        def on_ready(announced: str) -> None:
            if run_id is None or announced == run_id:
                loop.call_soon_threadsafe(wake.set)

        return wake, ReadyListener(self.store, on_ready).start()

    # -- one attempt ---------------------------------------------------------------

    async def run_attempt(self, claim: Claim) -> None:
        """Run one claimed attempt to its end; fenced-out attempts stop and write nothing."""
        fenced = threading.Event()
        # Before the body task exists: instrumentation may make its span current here,
        # and the body (with the worker and any agent it runs) inherits that context.
        notify(self, "dag_task_start", attempt_data(claim, self.worker_id), run_id=claim.run_id)
        result: dict[str, Any] = {"outcome": "cancelled"}
        body = asyncio.create_task(self._attempt(claim, fenced))
        beat = asyncio.create_task(self._heartbeat(claim, fenced, body))
        if self.on_attempt:
            self.on_attempt("started", claim)
        try:
            result = await body
        except asyncio.CancelledError:
            if not fenced.is_set():
                raise
        except DAGFencedError:
            fenced.set()
        except Exception as exc:  # a bug in our own code: never kill the pool, leave a trace
            result = {"outcome": "crashed", "error": _error(exc)}
            log.exception("dag worker %s: attempt %s crashed", self.worker_id, claim.attempt_id)
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await beat
            if fenced.is_set():
                result = {"outcome": "fenced"}
            if self.store.deferred_events:
                # Normally the attempt's last write carried them; not when it was cancelled.
                with contextlib.suppress(StorageError):
                    await run_blocking(self.store.flush_deferred)
            if self.on_attempt:
                self.on_attempt("fenced" if fenced.is_set() else "finished", claim)
            notify(
                self,
                "dag_task_end",
                {**attempt_data(claim, self.worker_id), **result},
                run_id=claim.run_id,
            )

    async def _heartbeat(
        self, claim: Claim, fenced: threading.Event, body: asyncio.Task[Any]
    ) -> None:
        ttl = self.config.task_lease_seconds
        every = self.config.heartbeat_seconds
        # The local deadline is a safety margin on our own monotonic clock: if renewals
        # keep failing (database unreachable), stop before the lease can have expired.
        # A renewal that hangs (a half-open connection drops packets without a reset)
        # is waited for only until that deadline too. One sent after the deadline (the
        # process was paused) waits for the database's answer, which then decides.
        deadline = time.monotonic() + ttl * 0.9
        while True:
            await asyncio.sleep(every)
            sent = time.monotonic()  # the new lease is at least as old as the request
            try:
                renewal = run_blocking(self.store.renew, claim, ttl)
                if deadline > sent:
                    await asyncio.wait_for(renewal, deadline - sent)
                else:
                    await renewal
                deadline = sent + ttl * 0.9
            except DAGFencedError:
                break
            except asyncio.TimeoutError:
                log.warning(
                    "dag worker %s: lease renewal got no answer before the local deadline",
                    self.worker_id,
                )
                break
            except StorageError as exc:
                log.warning("dag worker %s: lease renewal failed: %s", self.worker_id, exc)
                if time.monotonic() < deadline:
                    continue
                break
        fenced.set()
        body.cancel()

    def _parsed(self, claim: Claim, what: str, parse: Callable[[Any], Any]) -> Any:
        """``parse`` of the run's stored ``what``, once per run record."""
        key = (claim.run_id, what)
        cached = self._per_run.get(key)
        if cached is not None and cached[0] is claim.run:
            return cached[1]
        value = parse(getattr(claim.run, what))
        if len(self._per_run) >= 512:
            self._per_run.clear()
        self._per_run[key] = (claim.run, value)
        return value

    def _security_context(self, claim: Claim) -> Any:
        from lightagent_control.security import SecurityContext

        base = self._parsed(claim, "context", SecurityContext.from_dict)
        narrowing: dict[str, Any] = {
            "agent_id": self.worker_id,
            "task_id": claim.task_id,
            "attempt_id": claim.attempt_id,
            "run_id": claim.run_id,
        }
        if claim.task.spec.resource_requirements:
            narrowing["resources"] = claim.task.spec.resource_requirements
        return base.child(**narrowing)

    async def _authorize(self, claim: Claim, security: Any) -> None:
        args = {
            "run_id": claim.run_id,
            "task_id": claim.task_id,
            "worker_key": claim.task.spec.worker_key,
        }
        for resource in claim.task.spec.resource_requirements or (None,):
            await self.gate.authorize(
                self._capability, "lightagent-dag", args, security, resource=resource
            )

    async def _flush_audit(self) -> None:
        buffer = self.audit_buffer
        if not buffer:
            return
        items = []
        while True:
            try:
                items.append(buffer.popleft())
            except IndexError:
                break
        for kind, data in items:
            if data.get("run_id"):
                # Carried by the attempt's next write: an audit record costs no transaction.
                self.store.defer_event(
                    data["run_id"], f"dag.{kind}", dict(data), data.get("task_id")
                )

    async def _store(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await run_blocking(fn, *args, **kwargs)

    async def _attempt(self, claim: Claim, fenced: threading.Event) -> dict[str, Any]:
        """Run the attempt; returns ``{outcome, error?}`` for instrumentation."""
        cfg: DAGConfig = self._parsed(claim, "config", DAGConfig.from_dict)
        try:
            security = self._security_context(claim)
            try:
                await self._authorize(claim, security)
            finally:
                await self._flush_audit()
            deps = await self._dependencies(claim, security)
            context = TaskContext(
                run=claim.run,
                task=claim.task,
                attempt_id=claim.attempt_id,
                fence=claim.fence,
                worker_id=self.worker_id,
                security_context=security,
                dependency_artifacts=deps,
                fenced=fenced,
            )
            verifier_key = claim.task.spec.verifier_key
            missing = [
                k
                for k in (verifier_key, claim.task.spec.decomposer_key)
                if k and k not in self.verifiers
            ]
            if missing:
                # Visible and resolvable (register it, then resolve_blocker) — and checked
                # before the worker runs, so no work is done that nobody could verify.
                err = DAGError(
                    "LA-DAG-VERIFIER-UNAVAILABLE",
                    f"no verifier registered for key {missing[0]!r} here",
                )
                await self._store(self.store.reject, claim, _error(err), outcome="block")
                return {"outcome": "blocked", "error": _error(err)}
            worker = self.workers.create(claim.task.spec.worker_key, context)
            try:
                outcome = normalize_task_outcome(await self._execute(worker, context, cfg))
            finally:
                with contextlib.suppress(Exception):
                    self.workers.release(worker)
            if context.is_fenced():
                raise DAGFencedError(
                    run_id=claim.run_id,
                    task_id=claim.task_id,
                    fence=claim.fence,
                    operation="execute",
                )
            if outcome.kind is TaskOutcomeKind.BLOCKED:
                await self._store(self.store.block, claim, outcome.blocker or "blocked")
                return {"outcome": "blocked"}
            if outcome.kind is TaskOutcomeKind.DECOMPOSITION:
                verifier_key = claim.task.spec.decomposer_key or verifier_key
            verifier = self.verifiers[verifier_key]
            if outcome.kind is TaskOutcomeKind.DECOMPOSITION:
                verdict = await self._decomposition(claim, cfg, outcome, verifier, security, deps)
            else:
                verdict = await self._candidate(
                    claim, cfg, outcome, verifier, security, deps, context
                )
            return {"outcome": verdict}
        except DAGFencedError:
            raise
        except asyncio.CancelledError:
            raise
        except PolicyError as exc:
            # A permission denial does not heal by retrying.
            await self._store(self.store.reject, claim, _error(exc), outcome="fail")
            return {"outcome": "failed", "error": _error(exc)}
        except Exception as exc:
            failed = claim.task.attempts
            await self._store(
                self.store.reject, claim, _error(exc), outcome="retry", backoff=cfg.backoff(failed)
            )
            return {"outcome": "retry", "error": _error(exc)}

    async def _execute(self, worker: Any, context: TaskContext, cfg: DAGConfig) -> Any:
        if cfg.task_timeout_seconds is None:
            return await worker.execute(context)
        try:
            return await asyncio.wait_for(worker.execute(context), cfg.task_timeout_seconds)
        except asyncio.TimeoutError:
            # A sync worker's thread cannot be stopped; its late answer is dropped.
            raise DAGLimitError(
                "task_timeout_seconds", "exceeded", cfg.task_timeout_seconds
            ) from None

    async def _dependencies(self, claim: Claim, security: Any) -> dict[str, bytes]:
        if not claim.task.depends_on:
            return {}
        published = await self._store(self.store.published_artifacts, claim.run_id)
        out: dict[str, bytes] = {}
        for dep in claim.task.depends_on:
            manifest = published.get(dep)
            if manifest is None:
                raise DAGError(
                    "LA-DAG-STATE",
                    f"dependency {dep!r} of {claim.task_id!r} has no published artifact",
                )
            out[dep] = await self._store(self.artifact_store.read, manifest, security)
        return out

    def _snapshot(self, claim: Claim, deps: Mapping[str, bytes]) -> str:
        return canonical_digest(
            {"contract": claim.task.spec.contract_hash, "deps": sorted(deps), "fence": claim.fence}
        )

    async def _verify(self, verifier: Any, request: VerificationRequest) -> VerificationReport:
        async with self._verify_slots:
            report = await verifier.verify(request)
        if not isinstance(report, VerificationReport):
            raise DAGError(
                "LA-DAG-VERIFICATION-FAILED",
                f"verifier {getattr(verifier, 'key', '?')} did not return a VerificationReport",
            )
        return report

    async def _candidate(
        self,
        claim: Claim,
        cfg: DAGConfig,
        outcome: Any,
        verifier: Any,
        security: Any,
        deps: Mapping[str, bytes],
        context: TaskContext,
    ) -> str:
        content = outcome.content_bytes()
        if len(content) > cfg.max_artifact_bytes:
            raise DAGError(
                "LA-DAG-ARTIFACT-TOO-LARGE",
                f"candidate of {len(content)} bytes exceeds max_artifact_bytes={cfg.max_artifact_bytes}",
                details={
                    "limit": "max_artifact_bytes",
                    "value": len(content),
                    "maximum": cfg.max_artifact_bytes,
                },
            )
        published = await self._store(self.store.published_artifacts, claim.run_id) if deps else {}
        ids: dict[str, Any] = {
            "run_id": claim.run_id,
            "task_id": claim.task_id,
            "attempt_id": claim.attempt_id,
            "tenant_id": claim.run.tenant_id,
            "project_id": claim.run.project_id,
            "media_type": outcome.media_type,
            "contract_hash": claim.task.spec.contract_hash,
            "dependency_manifest": {d: published[d].artifact_id for d in deps if d in published},
        }
        blob: bytes | None = None
        if self._carries_blobs:
            # The bytes ride on the attempt's own record write: no commit of their own.
            describe = self.artifact_store.describe  # type: ignore[attr-defined]
            if len(content) <= _HASH_ON_LOOP_BYTES:
                blob, manifest = describe(content, **ids)
            else:
                blob, manifest = await run_blocking(describe, content, **ids)
        else:
            manifest = await self._store(self.artifact_store.stage, content, **ids)
        request = VerificationRequest(
            kind="completion",
            run=claim.run,
            task=claim.task,
            attempt_id=claim.attempt_id,
            input_snapshot_hash=self._snapshot(claim, deps),
            candidate=manifest,
            candidate_content=content,
            dependency_artifacts=dict(deps),
            security_context=security,
        )
        inline = bool(getattr(verifier, "inline", False))
        if not inline:
            await self._stage(claim, cfg, manifest, blob)
        report = await self._verify(verifier, request)
        if context.is_fenced():
            raise DAGFencedError(
                run_id=claim.run_id, task_id=claim.task_id, fence=claim.fence, operation="verify"
            )
        if (
            report.verdict is VerificationVerdict.PASS
            and report.input_snapshot_hash == request.input_snapshot_hash
        ):
            # An inline check ran before anything was recorded: stage and publish at once
            # (with the bytes, when they ride along); otherwise the bytes went with the stage.
            publish, extra = (
                (self.store.publish_verified, {"blob": blob})
                if inline
                else (self.store.publish, {})
            )
            successor = await self._store(
                publish, claim, manifest, report.to_dict(), claim_next=self._next_request(), **extra
            )
            if successor is not None:
                self._preclaimed.append(successor)
            return "verified"
        if inline:  # the candidate's record and its rejection, as for any other verifier
            await self._stage(claim, cfg, manifest, blob)
        await self._rejected(claim, cfg, report)
        return "rejected"

    def _next_request(self) -> ClaimRequest | None:
        """How to claim a successor in a publication: only while a pool runs and is not stopping."""
        if self._claim_request is None or (self._stop is not None and self._stop.is_set()):
            return None
        return self._claim_request

    async def _stage(
        self, claim: Claim, cfg: DAGConfig, manifest: Any, blob: bytes | None = None
    ) -> None:
        """Record the staged candidate (with its bytes, if they ride along), waiting for a verification slot."""
        wait = cfg.poll_interval
        while not await self._store(
            self.store.stage_candidate,
            claim,
            manifest,
            max_pending=cfg.max_pending_verifications,
            blob=blob,
        ):
            await asyncio.sleep(wait * random.uniform(0.5, 1.0))
            wait = min(wait * 2, cfg.poll_interval_max)

    async def _rejected(self, claim: Claim, cfg: DAGConfig, report: VerificationReport) -> None:
        outcome = "block" if report.verdict is VerificationVerdict.INCONCLUSIVE else "retry"
        err = {
            "code": "LA-DAG-VERIFICATION-FAILED",
            "message": f"verifier {report.verifier_key} said {report.verdict.value}",
            "diagnostics": list(report.diagnostics),
        }
        await self._store(
            self.store.reject,
            claim,
            err,
            outcome=outcome,
            backoff=cfg.backoff(claim.task.attempts),
            report=report.to_dict(),
        )

    async def _decomposition(
        self,
        claim: Claim,
        cfg: DAGConfig,
        outcome: Any,
        verifier: Any,
        security: Any,
        deps: Mapping[str, bytes],
    ) -> str:
        proposal = outcome.decomposition
        if not proposal.parent_task_id:
            from dataclasses import replace

            proposal = replace(proposal, parent_task_id=claim.task_id)
        if proposal.parent_task_id != claim.task_id:
            raise DAGError(
                "LA-DAG-INVALID",
                f"proposal is for {proposal.parent_task_id!r}, not {claim.task_id!r}",
            )
        request = VerificationRequest(
            kind="decomposition",
            run=claim.run,
            task=claim.task,
            attempt_id=claim.attempt_id,
            input_snapshot_hash=self._snapshot(claim, deps),
            decomposition=proposal,
            dependency_artifacts=dict(deps),
            security_context=security,
        )
        report = await self._verify(verifier, request)
        if report.verdict is not VerificationVerdict.PASS:
            await self._rejected(claim, cfg, report)
            return "rejected"
        await self._store(self.store.accept_decomposition, claim, proposal, report.to_dict())
        return "decomposed"
