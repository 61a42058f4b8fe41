"""Narrowing-only security contexts: who acts (:class:`SecurityContext`) and what they may do
(:class:`PermissionSet`); :mod:`lightagent_control.security` is their public face, with the gate."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from lightagent.errors import ConfigurationError, PolicyError

from lightagent_control.resources import covers as covers_resource
from lightagent_control.resources import pattern_problem, resource_matches, resource_problem
from lightagent_control.specs import EFFECTS, CapabilityRisk, CapabilitySpec

__all__ = ["SECURITY_CONTEXT_SCHEMA_VERSION", "PermissionSet", "SecurityContext"]

SECURITY_CONTEXT_SCHEMA_VERSION = 1


# -- name patterns ---------------------------------------------------------------------
# An entry is an exact name, or a prefix pattern ending in "*" ("tool.*"). Only prefix
# patterns are supported because their containment is decidable, which narrowing needs.


def _covers(pattern: str, entry: str) -> bool:
    """Whether every name ``entry`` stands for is also matched by ``pattern``."""
    if pattern.endswith("*"):
        base = entry[:-1] if entry.endswith("*") else entry
        return base.startswith(pattern[:-1])
    return pattern == entry


def _matches(patterns: Iterable[str], name: str, covers: Any = _covers) -> bool:
    return any(covers(p, name) for p in patterns)


def _intersect(
    parent: frozenset[str] | None, child: frozenset[str] | None, covers: Any = _covers
) -> frozenset[str] | None:
    """Entries standing for names in both sets (``None`` = everything)."""
    if parent is None:
        return child
    if child is None:
        return parent
    keep = {c for c in child if _matches(parent, c, covers)}
    keep |= {p for p in parent if _matches(child, p, covers)}
    return frozenset(keep)


def _names(value: Any, what: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = (value,)
    try:
        items = frozenset(value)
    except TypeError:
        raise ConfigurationError(
            "LA-CONFIG", f"{what} must be an iterable of strings, got {type(value).__name__}"
        ) from None
    for item in items:
        if not isinstance(item, str) or not item:
            raise ConfigurationError("LA-CONFIG", f"{what} entries must be non-empty strings")
    return items


_UNSET: Any = object()


@dataclass(frozen=True)
class PermissionSet:
    """Capabilities an actor may use: allow-list (``None`` = all), deny-list, risk ceiling, effects."""

    allowed: frozenset[str] | None = None
    denied: frozenset[str] = frozenset()
    max_risk: CapabilityRisk = CapabilityRisk.DESTRUCTIVE
    effects: frozenset[str] | None = None

    if TYPE_CHECKING:
        # What __post_init__ accepts: any iterable of names, ``max_risk`` as in CapabilityRisk.coerce.
        def __init__(
            self,
            allowed: Iterable[str] | None = None,
            denied: Iterable[str] = (),
            max_risk: CapabilityRisk | int | str = CapabilityRisk.DESTRUCTIVE,
            effects: Iterable[str] | None = None,
        ) -> None: ...

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed", _names(self.allowed, "allowed"))
        object.__setattr__(self, "denied", _names(self.denied, "denied") or frozenset())
        object.__setattr__(self, "max_risk", CapabilityRisk.coerce(self.max_risk))
        effects = _names(self.effects, "effects")
        if effects is not None and not effects <= EFFECTS:
            raise ConfigurationError(
                "LA-CONFIG",
                f"unknown effects {sorted(effects - EFFECTS)}",
                hint=f"Use a subset of {sorted(EFFECTS)}.",
            )
        object.__setattr__(self, "effects", effects)

    @classmethod
    def unrestricted(cls) -> PermissionSet:
        """Everything allowed."""
        return cls()

    @classmethod
    def nothing(cls) -> PermissionSet:
        """Nothing allowed."""
        return cls(allowed=frozenset())

    def denial_reason(
        self, capability: str, risk: Any = CapabilityRisk.READ_ONLY, effects: Iterable[str] = ()
    ) -> str | None:
        """Why ``capability`` at ``risk`` with ``effects`` is refused, or None when allowed."""
        if _matches(self.denied, capability):
            return f"capability {capability!r} is denied"
        if self.allowed is not None and not _matches(self.allowed, capability):
            return f"capability {capability!r} is not in the allowed set"
        level = CapabilityRisk.coerce(risk)
        if level > self.max_risk:
            return f"capability {capability!r} risk L{int(level)} exceeds L{int(self.max_risk)}"
        if self.effects is not None:
            extra = set(effects) - self.effects
            if extra:
                return f"capability {capability!r} needs effects {sorted(extra)} not permitted"
        return None

    def allows(
        self, capability: str, risk: Any = CapabilityRisk.READ_ONLY, effects: Iterable[str] = ()
    ) -> bool:
        """Whether ``capability`` at ``risk`` with ``effects`` is permitted."""
        return self.denial_reason(capability, risk, effects) is None

    def allows_spec(self, spec: CapabilitySpec) -> bool:
        """Whether the capability described by ``spec`` is permitted."""
        return self.allows(spec.name, spec.risk, spec.effects)

    def narrow(
        self,
        *,
        allowed: Iterable[str] | None = _UNSET,
        denied: Iterable[str] = (),
        max_risk: Any = None,
        effects: Iterable[str] | None = _UNSET,
        strict: bool = False,
    ) -> PermissionSet:
        """A subset of these permissions: allow-lists intersect, deny-lists join, the ceiling drops.

        ``allowed=[]`` yields a set that allows nothing. ``allowed=None`` (or omitted)
        keeps the parent's list. With ``strict=True`` asking for anything the parent
        lacks raises ``LA-PERMISSION-WIDEN`` instead of being dropped.
        """
        want_allowed = None if allowed is _UNSET else _names(allowed, "allowed")
        want_effects = None if effects is _UNSET else _names(effects, "effects")
        new_allowed = _intersect(self.allowed, want_allowed)
        new_effects = _intersect(self.effects, want_effects)
        risk = self.max_risk if max_risk is None else CapabilityRisk.coerce(max_risk)
        if strict:
            widened = []
            if want_allowed is not None and self.allowed is not None:
                widened += sorted(c for c in want_allowed if not _matches(self.allowed, c))
            if want_effects is not None and self.effects is not None:
                widened += sorted(want_effects - self.effects)
            if risk > self.max_risk:
                widened.append(f"risk L{int(risk)}")
            if widened:
                raise PolicyError(
                    "LA-PERMISSION-WIDEN",
                    f"narrowing asked for more than the parent holds: {widened}",
                    details={"requested": widened},
                )
        return PermissionSet(
            allowed=new_allowed,
            denied=self.denied | (_names(denied, "denied") or frozenset()),
            max_risk=min(risk, self.max_risk),
            effects=new_effects,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form (``allowed: null`` means every capability)."""
        return {
            "allowed": None if self.allowed is None else sorted(self.allowed),
            "denied": sorted(self.denied),
            "max_risk": f"L{int(self.max_risk)}",
            "effects": None if self.effects is None else sorted(self.effects),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> PermissionSet:
        """Rebuild from :meth:`to_dict` output."""
        data = dict(data or {})
        return cls(
            allowed=data.get("allowed"),
            denied=data.get("denied") or (),
            max_risk=data.get("max_risk", CapabilityRisk.DESTRUCTIVE),
            effects=data.get("effects"),
        )


def _as_deadline(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ConfigurationError("LA-CONFIG", f"deadline {value!r} is not ISO 8601") from None
    if not isinstance(value, datetime):
        raise ConfigurationError(
            "LA-CONFIG", f"deadline must be a datetime or ISO text, got {type(value).__name__}"
        )
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _resources(value: Any) -> frozenset[str] | None:
    """Resource patterns, each checked (``..``, NUL, backslashes … are a typed error)."""
    patterns = _names(value, "resources")
    for pattern in patterns or ():
        problem = pattern_problem(pattern)
        if problem is not None:
            raise ConfigurationError(
                "LA-CONFIG",
                f"resource pattern {pattern!r} is refused: {problem}",
                hint="Name resources with '/'-separated segments, without '.', '..' or '//'.",
                details={"resource": pattern},
            )
    return patterns


_IDENTITY = ("user_id", "tenant_id", "project_id", "session_id", "run_id")


@dataclass(frozen=True)
class SecurityContext:
    """Who acts and what they may touch; frozen, and only ever narrowed for children."""

    user_id: str | None = None
    tenant_id: str | None = None
    project_id: str | None = None
    session_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    attempt_id: str | None = None
    agent_id: str | None = None
    parent_agent_id: str | None = None
    permissions: PermissionSet = field(default_factory=PermissionSet)
    #: ``None`` = any resource; a set = only those (exact names or ``prefix*`` patterns).
    resources: frozenset[str] | None = None
    network_allowed: bool = False
    sandbox_required: bool = False
    deadline: datetime | None = None
    policy_version: str = "1"
    approval_token_ids: frozenset[str] = frozenset()
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    schema_version: int = SECURITY_CONTEXT_SCHEMA_VERSION

    def __post_init__(self) -> None:
        if not isinstance(self.permissions, PermissionSet):
            if isinstance(self.permissions, Mapping):
                object.__setattr__(self, "permissions", PermissionSet.from_dict(self.permissions))
            else:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"permissions must be a PermissionSet, got {type(self.permissions).__name__}",
                )
        object.__setattr__(self, "resources", _resources(self.resources))
        object.__setattr__(self, "deadline", _as_deadline(self.deadline))
        object.__setattr__(
            self,
            "approval_token_ids",
            _names(self.approval_token_ids, "approval_token_ids") or frozenset(),
        )

    # -- checks -----------------------------------------------------------------------
    def allows_resource(self, resource: str | None) -> bool:
        """Whether ``resource`` is within this context's resources."""
        return self.resource_denial(resource) is None

    def resource_denial(self, resource: str | None) -> str | None:
        """Why ``resource`` is refused in this context, or None when it is allowed.

        A name that could mean another path once normalised (``..``, ``%2e%2e``, NUL,
        backslashes, ``//`` …) is refused even in an unrestricted context; see
        :mod:`lightagent_control.resources`.
        """
        if resource is not None:
            problem = resource_problem(resource)
            if problem is not None:
                return f"resource {resource!r} is refused: {problem}"
        if self.resources is None:
            return None
        if resource is not None and resource_matches(self.resources, resource):
            return None
        return f"resource {resource!r} is outside this context"

    def expired(self, now: datetime | None = None) -> bool:
        """Whether the deadline has passed."""
        if self.deadline is None:
            return False
        return (now or datetime.now(timezone.utc)) >= self.deadline

    # -- narrowing --------------------------------------------------------------------
    def narrow(
        self,
        *,
        allowed_capabilities: Iterable[str] | None = _UNSET,
        denied_capabilities: Iterable[str] = (),
        max_risk: Any = None,
        effects: Iterable[str] | None = _UNSET,
        resources: Iterable[str] | None = _UNSET,
        network_allowed: bool | None = None,
        sandbox_required: bool | None = None,
        deadline: Any = None,
        timeout_seconds: float | None = None,
        agent_id: str | None = None,
        task_id: str | None = None,
        attempt_id: str | None = None,
        strict: bool = False,
        metadata: Mapping[str, Any] | None = None,
        **identity: Any,
    ) -> SecurityContext:
        """A context holding at most what this one holds.

        Allow-lists and resources intersect, the network and the sandbox can only be
        turned off / on respectively, the deadline only moves earlier, the risk ceiling
        only drops. Identity fields (``user_id``, ``tenant_id``, ``project_id``,
        ``session_id``, ``run_id``) may be filled in when unset, never changed.
        ``strict=True`` raises ``LA-PERMISSION-WIDEN`` on any request for more.
        """
        widened: list[str] = []
        permissions = self.permissions.narrow(
            allowed=allowed_capabilities,
            denied=denied_capabilities,
            max_risk=max_risk,
            effects=effects,
            strict=strict,
        )
        new_resources = self.resources
        if resources is not _UNSET and resources is not None:
            wanted = _resources(resources) or frozenset()
            new_resources = _intersect(self.resources, wanted, covers_resource)
            if self.resources is not None:
                widened += [
                    f"resource {r}"
                    for r in sorted(wanted)
                    if not _matches(self.resources, r, covers_resource)
                ]
        network = self.network_allowed
        if network_allowed is not None:
            if network_allowed and not self.network_allowed:
                widened.append("network")
            network = self.network_allowed and bool(network_allowed)
        sandbox = self.sandbox_required or bool(sandbox_required)
        if sandbox_required is False and self.sandbox_required:
            widened.append("sandbox")
        new_deadline = self.deadline
        candidates = [_as_deadline(deadline)] if deadline is not None else []
        if timeout_seconds is not None:
            if not (isinstance(timeout_seconds, (int, float)) and timeout_seconds > 0):
                raise ConfigurationError(
                    "LA-CONFIG", f"timeout_seconds must be > 0, got {timeout_seconds!r}"
                )
            candidates.append(datetime.now(timezone.utc) + timedelta(seconds=timeout_seconds))
        for candidate in candidates:
            if new_deadline is not None and candidate is not None and candidate > new_deadline:
                widened.append("deadline")
            if candidate is not None and (new_deadline is None or candidate < new_deadline):
                new_deadline = candidate
        ids: dict[str, Any] = {}
        for name, value in identity.items():
            if name not in _IDENTITY:
                raise ConfigurationError(
                    "LA-CONFIG", f"narrow() got an unexpected argument {name!r}"
                )
            current = getattr(self, name)
            if value is not None and current is not None and value != current:
                raise PolicyError(
                    "LA-PERMISSION-WIDEN",
                    f"a child context cannot change {name}",
                    details={"field": name},
                )
            if value is not None:
                ids[name] = value
        if strict and widened:
            raise PolicyError(
                "LA-PERMISSION-WIDEN",
                f"narrowing asked for more than the parent holds: {widened}",
                details={"requested": widened},
            )
        return replace(
            self,
            permissions=permissions,
            resources=new_resources,
            network_allowed=network,
            sandbox_required=sandbox,
            deadline=new_deadline,
            agent_id=agent_id if agent_id is not None else self.agent_id,
            task_id=task_id if task_id is not None else self.task_id,
            attempt_id=attempt_id if attempt_id is not None else self.attempt_id,
            metadata={**self.metadata, **dict(metadata or {})},
            **ids,
        )

    def child(self, *, agent_id: str | None = None, **narrowing: Any) -> SecurityContext:
        """A narrowed context for a child agent, job, skill or task; its parent is this agent."""
        narrowed = self.narrow(agent_id=agent_id, **narrowing)
        return replace(narrowed, parent_agent_id=self.agent_id)

    def intersect(self, other: SecurityContext) -> SecurityContext:
        """This context narrowed to what ``other`` holds too (its identity kept): where two
        parents both bound an actor, as a handoff target's own context and its source's.

        A tenant or project only ``other`` names is filled in; one both name differently is
        refused (``LA-PERMISSION-WIDEN``): an actor acts for one tenant."""
        theirs = other.permissions
        return self.narrow(
            tenant_id=other.tenant_id,
            project_id=other.project_id,
            allowed_capabilities=theirs.allowed,
            denied_capabilities=theirs.denied,
            max_risk=theirs.max_risk,
            effects=theirs.effects,
            resources=other.resources,
            network_allowed=other.network_allowed,
            sandbox_required=other.sandbox_required,
            deadline=other.deadline,
        )

    def is_within(self, parent: SecurityContext) -> bool:
        """Whether this context holds nothing ``parent`` does not (used by tests and audits)."""
        mine, theirs = self.permissions, parent.permissions
        if theirs.allowed is not None and (
            mine.allowed is None or not all(_matches(theirs.allowed, a) for a in mine.allowed)
        ):
            return False
        if not all(_matches(mine.denied, d) for d in theirs.denied):
            return False
        if mine.max_risk > theirs.max_risk:
            return False
        if theirs.effects is not None and (
            mine.effects is None or not mine.effects <= theirs.effects
        ):
            return False
        if parent.resources is not None and (
            self.resources is None
            or not all(_matches(parent.resources, r, covers_resource) for r in self.resources)
        ):
            return False
        if self.network_allowed and not parent.network_allowed:
            return False
        if parent.sandbox_required and not self.sandbox_required:
            return False
        return not (
            parent.deadline is not None
            and (self.deadline is None or self.deadline > parent.deadline)
        )

    # -- serialisation ----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "user_id": self.user_id,
            "tenant_id": self.tenant_id,
            "project_id": self.project_id,
            "session_id": self.session_id,
            "run_id": self.run_id,
            "task_id": self.task_id,
            "attempt_id": self.attempt_id,
            "agent_id": self.agent_id,
            "parent_agent_id": self.parent_agent_id,
            "permissions": self.permissions.to_dict(),
            "resources": None if self.resources is None else sorted(self.resources),
            "network_allowed": self.network_allowed,
            "sandbox_required": self.sandbox_required,
            "deadline": self.deadline.isoformat() if self.deadline else None,
            "policy_version": self.policy_version,
            "approval_token_ids": sorted(self.approval_token_ids),
            "metadata": dict(self.metadata),
            "schema_version": self.schema_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SecurityContext:
        """Rebuild from :meth:`to_dict` output; unknown keys are a typed error."""
        values = dict(data)
        values["permissions"] = PermissionSet.from_dict(values.get("permissions"))
        values["approval_token_ids"] = values.get("approval_token_ids") or ()
        try:
            return cls(**values)
        except TypeError as exc:
            raise ConfigurationError("LA-CONFIG", f"not a SecurityContext: {exc}") from None
