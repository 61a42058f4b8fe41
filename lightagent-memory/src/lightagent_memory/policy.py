"""``MemoryPolicy``: what of memory may reach the prompt, and what may be written. Fails closed.

A retrieved result reaches the prompt only when it is attributed to the asking user in
the policy's namespace and the run's tenant (``user_id`` or ``metadata.user_id``; a
``metadata.tenant_id`` must be the run's) and names its ``source``,
and passes every filter the policy sets: sources, scopes, agents, trust levels,
confidence, expiry, and promotion (internal evidence must be promoted and injectable).
A write is refused when it is empty, too short or too long, looks like a credential,
matches a rejected pattern, repeats a known memory, exceeds the per-run limit, or fails
the admission callback. A callback that raises, or answers nothing that reads as a
decision (``None`` included), refuses; the reason of one that raises names only the
exception type (the message may hold the text).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from lightagent.errors import ConfigurationError

from lightagent_memory.filtering import MemoryAdmissionDecision, MemoryFilterOutcome
from lightagent_memory.scope import agent_memory_user_id, is_internal, memory_user_id, run_tenant

__all__ = ["MemoryPolicy", "coerce_admission", "expired"]

_NAMESPACE = re.compile(r"^[A-Za-z0-9_.@+=-]{1,128}$")

Admission = Callable[[Any, dict[str, Any]], Any]
Promotion = Callable[[Any, dict[str, Any]], Any]


def _names(value: Iterable[str] | str | None, param: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = (value,)
    try:
        names = frozenset(str(v) for v in value)
    except TypeError:
        raise ConfigurationError(
            "LA-CONFIG",
            f"MemoryPolicy({param}=...) must be a collection of names, got {type(value).__name__}",
        ) from None
    return names


def _patterns(value: Iterable[str | re.Pattern[str]] | None) -> tuple[re.Pattern[str], ...]:
    out = []
    for pattern in value or ():
        try:
            out.append(pattern if isinstance(pattern, re.Pattern) else re.compile(str(pattern)))
        except re.error as exc:
            raise ConfigurationError(
                "LA-CONFIG",
                f"MemoryPolicy(reject_write_patterns=...) has an invalid pattern {pattern!r}: {exc}",
                hint="Pass regular expressions (strings or re.compile(...)).",
            ) from exc
    return tuple(out)


def _limit(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(
            "LA-CONFIG", f"MemoryPolicy({name}=...) must be an integer >= 0, got {value!r}"
        )
    return value


def _callback(name: str, value: Any) -> Any:
    if value is not None and not callable(value):
        raise ConfigurationError(
            "LA-CONFIG",
            f"MemoryPolicy({name}=...) must be callable (data_or_candidate, ctx), got {type(value).__name__}",
        )
    return value


def _timestamp(value: Any) -> float | None:
    """Seconds since the epoch for an ``expires_at``-like value; None when unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, _dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
        return moment.timestamp()
    if isinstance(value, _dt.date):
        end = _dt.datetime.combine(value, _dt.time.max, tzinfo=_dt.timezone.utc)
        return end.timestamp()
    if isinstance(value, str):
        text = value.strip()
        try:
            if len(text) == 10:  # a date: valid through that day (mem0's expiration_date)
                return _timestamp(_dt.date.fromisoformat(text))
            return _timestamp(_dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def expired(item: Mapping[str, Any], *, now: float) -> bool:
    """Whether a result's ``expires_at`` / ``expiration_date`` has passed (unreadable: yes)."""
    raw = item.get("metadata")
    metadata = raw if type(raw) is dict or isinstance(raw, Mapping) else {}
    for source in (metadata, item):
        for key in ("expires_at", "expiration_date"):
            value = source.get(key)
            if value is not None:
                moment = _timestamp(value)
                return moment is None or moment <= now
    return False


def coerce_admission(result: Any, name: str) -> MemoryAdmissionDecision:
    """A callback's answer as a decision: True allows, False/str refuse, dicts and decision
    objects (``allowed``/``reason``/``value``) as given; anything else (None too) refuses."""
    if result is True:
        return MemoryAdmissionDecision(True)
    if result is False:
        return MemoryAdmissionDecision(False, name)
    if isinstance(result, str):
        return MemoryAdmissionDecision(False, result or name)
    if isinstance(result, Mapping) and "allowed" in result:
        return MemoryAdmissionDecision(
            bool(result["allowed"]), result.get("reason"), result.get("value")
        )
    if hasattr(result, "allowed"):
        return MemoryAdmissionDecision(
            bool(result.allowed), getattr(result, "reason", None), getattr(result, "value", None)
        )
    return MemoryAdmissionDecision(False, f"{name} returned {type(result).__name__}")


class MemoryPolicy:
    """The memory boundary of an agent (the seeds' fields; the defaults fail closed).

    ``namespace`` scopes every user id the backend sees (``"tenant-a:alice"``); it may not
    contain ``:``. ``allow_unattributed_results=True`` accepts results that name no user
    or no source (never those of another user or namespace).
    """

    def __init__(
        self,
        *,
        namespace: str | None = None,
        allow_unattributed_results: bool = False,
        allowed_sources: Collection[str] | None = None,
        allowed_scopes: Collection[str] | None = None,
        allowed_agent_names: Collection[str] | None = None,
        allowed_trust_levels: Collection[str] | None = None,
        min_confidence: float | None = None,
        enforce_expires_at: bool = True,
        memory_write_admission: Admission | None = None,
        max_writes_per_run: int | None = None,
        reject_duplicate_writes: bool = False,
        min_write_length: int | None = None,
        max_write_length: int | None = None,
        reject_write_patterns: Iterable[str | re.Pattern[str]] | None = None,
        reject_secret_writes: bool = True,
        memory_promotion_admission: Promotion | None = None,
        require_promotion_for_internal_memory: bool = True,
        require_write_admission: bool = False,
    ) -> None:
        if namespace is not None and not _NAMESPACE.fullmatch(str(namespace)):
            raise ConfigurationError(
                "LA-CONFIG",
                f"MemoryPolicy(namespace={namespace!r}) is not a valid namespace",
                hint="Use 1-128 characters from A-Z a-z 0-9 _ . @ + = - (no ':').",
                details={"namespace": repr(namespace)[:200]},
            )
        if min_confidence is not None and (
            isinstance(min_confidence, bool) or not isinstance(min_confidence, (int, float))
        ):
            raise ConfigurationError(
                "LA-CONFIG",
                f"MemoryPolicy(min_confidence=...) must be a number, got {min_confidence!r}",
            )
        self.namespace = namespace
        self.allow_unattributed_results = bool(allow_unattributed_results)
        self.allowed_sources = _names(allowed_sources, "allowed_sources")
        self.allowed_scopes = _names(allowed_scopes, "allowed_scopes")
        self.allowed_agent_names = _names(allowed_agent_names, "allowed_agent_names")
        self.allowed_trust_levels = _names(allowed_trust_levels, "allowed_trust_levels")
        self.min_confidence = None if min_confidence is None else float(min_confidence)
        self.enforce_expires_at = bool(enforce_expires_at)
        self.memory_write_admission = _callback("memory_write_admission", memory_write_admission)
        self.max_writes_per_run = _limit("max_writes_per_run", max_writes_per_run)
        self.reject_duplicate_writes = bool(reject_duplicate_writes)
        self.min_write_length = _limit("min_write_length", min_write_length)
        self.max_write_length = _limit("max_write_length", max_write_length)
        self.reject_write_patterns = _patterns(reject_write_patterns)
        self.reject_secret_writes = bool(reject_secret_writes)
        self.memory_promotion_admission = _callback(
            "memory_promotion_admission", memory_promotion_admission
        )
        self.require_promotion_for_internal_memory = bool(require_promotion_for_internal_memory)
        self.require_write_admission = bool(require_write_admission)

    def with_namespace(self, namespace: str) -> MemoryPolicy:
        """A copy of this policy in ``namespace``."""
        import copy

        if not _NAMESPACE.fullmatch(str(namespace)):
            MemoryPolicy(namespace=namespace)  # raises the constructor's typed LA-CONFIG
        clone = copy.copy(self)
        clone.namespace = namespace
        return clone

    # -- ids ---------------------------------------------------------------------------
    def scoped_user_id(self, user_id: str, tenant: str | None = None) -> str:
        """The id the backend sees for ``user_id`` (``"ns:alice"``; a tenant goes first)."""
        return memory_user_id(user_id, self.namespace, tenant)

    def agent_user_id(self, agent_name: str, tenant: str | None = None) -> str:
        """The id of an agent's own (self-learning) memory in this namespace and tenant."""
        return agent_memory_user_id(agent_name, self.namespace, tenant)

    def backend_user_id(self, user_id: str, *, context: Any = None) -> str:
        """The ``MemoryFilter`` hook: the id retrieve and store use (in the run's tenant)."""
        return self.scoped_user_id(user_id, run_tenant(context))

    # -- retrieval ---------------------------------------------------------------------
    def result_reason(
        self, item: Any, scoped: str, *, now: float | None = None, tenant: str | None = None
    ) -> str | None:
        """Why ``item`` (retrieved for the backend id ``scoped`` in ``tenant``) may not be
        injected; None: it may."""
        if type(item) is not dict and not isinstance(item, Mapping):
            return "malformed"
        raw_meta = item.get("metadata")
        metadata: Mapping[str, Any] = (
            raw_meta if type(raw_meta) is dict or isinstance(raw_meta, Mapping) else {}
        )
        owner = item.get("user_id")
        if owner is None:
            owner = metadata.get("user_id")
        if owner is not None and type(owner) is not str:
            owner = str(owner)
        if owner is None:
            if not self.allow_unattributed_results:
                return "unattributed"
        elif owner != scoped:
            return "other_user"
        if self.namespace is not None and metadata.get("namespace") not in (None, self.namespace):
            return "other_namespace"
        if metadata.get("tenant_id") not in (None, tenant):
            return "other_tenant"
        source = metadata.get("source")
        if source is None and not self.allow_unattributed_results:
            return "no_source"
        if self.allowed_sources is not None and source not in self.allowed_sources:
            return "source"
        if self.allowed_scopes is not None and metadata.get("scope") not in self.allowed_scopes:
            return "scope"
        if (
            self.allowed_agent_names is not None
            and metadata.get("agent_name") not in self.allowed_agent_names
        ):
            return "agent"
        if (
            self.allowed_trust_levels is not None
            and metadata.get("trust_level") not in self.allowed_trust_levels
        ):
            return "trust"
        if self.min_confidence is not None:
            confidence = metadata.get("confidence")
            if (
                isinstance(confidence, bool)
                or not isinstance(confidence, (int, float))
                or confidence < self.min_confidence
            ):
                return "confidence"
        if self.enforce_expires_at:
            if expired(item, now=time.time() if now is None else now):
                return "expired"
        if metadata.get("injectable") is False:
            return "not_injectable"
        if self.require_promotion_for_internal_memory and is_internal(metadata):
            if (
                metadata.get("promotion_status") != "promoted"
                or metadata.get("injectable") is not True
            ):
                return "unpromoted"
        return None

    def allows_result(self, item: Any, scoped: str, original: str | None = None) -> bool:
        """Whether ``item``, retrieved for the backend id ``scoped``, may reach the prompt."""
        return self.result_reason(item, scoped) is None

    def _split(
        self, results: Iterable[Any], scoped: str, tenant: str | None
    ) -> MemoryFilterOutcome:
        now = time.time()
        outcome = MemoryFilterOutcome([])
        for index, item in enumerate(results):
            reason = self.result_reason(item, scoped, now=now, tenant=tenant)
            if reason is None:
                outcome.allowed.append(item)
            else:
                outcome.blocked.append({"index": index, "reason": reason})
        return outcome

    def filter_results(
        self, results: list[dict[str, Any]], *, user_id: str, context: Any
    ) -> MemoryFilterOutcome:
        """The ``MemoryFilter`` hook for a user's memories."""
        tenant = run_tenant(context)
        return self._split(results, self.scoped_user_id(user_id, tenant), tenant)

    def filter_agent_results(
        self, results: list[dict[str, Any]], *, agent_name: str, context: Any
    ) -> MemoryFilterOutcome:
        """The same rules for an agent's own memory (self-learning)."""
        tenant = run_tenant(context)
        return self._split(results, self.agent_user_id(agent_name, tenant), tenant)

    # -- writes ------------------------------------------------------------------------
    def write_fingerprint(self, data: Any, ctx: Mapping[str, Any] | None = None) -> str:
        """What makes two writes duplicates: the same text (case and spacing aside) for one id."""
        owner = str((ctx or {}).get("memory_user_id") or (ctx or {}).get("user_id") or "")
        text = " ".join(str(data).casefold().split())
        digest = hashlib.sha256(f"{owner}\x00{text}".encode("utf-8", "surrogatepass"))
        return digest.hexdigest()[:32]

    def allows_write(
        self,
        data: Any,
        ctx: Mapping[str, Any] | None = None,
        *,
        write_count: int = 0,
        recent_fingerprints: Collection[str] = (),
    ) -> MemoryAdmissionDecision:
        """Admit, refuse (with a reason) or rewrite one write."""
        ctx = dict(ctx or {})
        if data is None:
            return MemoryAdmissionDecision(False, "empty")
        text = data if isinstance(data, str) else str(data)
        if not text.strip():
            return MemoryAdmissionDecision(False, "empty")
        if self.max_writes_per_run is not None and write_count >= self.max_writes_per_run:
            return MemoryAdmissionDecision(False, "limit")
        if self.min_write_length is not None and len(text.strip()) < self.min_write_length:
            return MemoryAdmissionDecision(False, "too_short")
        if self.max_write_length is not None and len(text) > self.max_write_length:
            return MemoryAdmissionDecision(False, "too_long")
        if self.reject_secret_writes and _looks_secret(text):
            return MemoryAdmissionDecision(False, "secret")
        for pattern in self.reject_write_patterns:
            if pattern.search(text):
                return MemoryAdmissionDecision(False, "pattern")
        if (
            self.reject_duplicate_writes
            and self.write_fingerprint(text, ctx) in recent_fingerprints
        ):
            return MemoryAdmissionDecision(False, "duplicate")
        callback = self.memory_write_admission
        if callback is None:
            if self.require_write_admission:
                return MemoryAdmissionDecision(False, "admission_required")
            return MemoryAdmissionDecision(True)
        try:
            decision = coerce_admission(callback(data, ctx), "memory_write_admission")
        except Exception as exc:  # a failing decider refuses; its message may hold the text
            return MemoryAdmissionDecision(
                False, f"memory_write_admission failed: {type(exc).__name__}"
            )
        if decision.allowed and decision.value is not None and self.reject_secret_writes:
            if _looks_secret(str(decision.value)):
                return MemoryAdmissionDecision(False, "secret")
        return decision

    def admit_write(self, data: Any, *, user_id: str, context: Any) -> MemoryAdmissionDecision:
        """The ``MemoryFilter`` hook (without per-run counts; the loop calls :meth:`allows_write`)."""
        return self.allows_write(data, {"user_id": user_id})

    # -- promotion ---------------------------------------------------------------------
    def allows_promotion(self, candidate: Any, ctx: Mapping[str, Any] | None = None) -> Any:
        """The promotion decision for ``candidate``: the callback's, or ``keep`` without one.

        A callback that raises keeps the candidate non-injectable (fail closed).
        """
        from lightagent_memory.candidates import MemoryPromotionDecision, coerce_decision

        callback = self.memory_promotion_admission
        if callback is None:
            return MemoryPromotionDecision.keep("no promotion policy")
        try:
            return coerce_decision(callback(candidate, dict(ctx or {})))
        except Exception as exc:
            return MemoryPromotionDecision(
                "keep",
                f"memory_promotion_admission failed: {type(exc).__name__}",
                metadata={"blocked": True},
            )

    def __repr__(self) -> str:
        return f"MemoryPolicy(namespace={self.namespace!r})"


def _looks_secret(text: str) -> bool:
    """Credential-looking content (API keys, tokens, passwords): what redaction would hide."""
    from lightagent.redaction import redact_text

    try:
        return redact_text(text) != text
    except Exception:  # a detector that fails refuses the write
        return True
