"""Capability specs, risk levels, scopes, provider health and the provider protocol."""

from __future__ import annotations

import asyncio
import enum
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from lightagent.errors import ConfigurationError, PluginError

__all__ = [
    "EFFECTS",
    "BaseCapabilityProvider",
    "CapabilityProvider",
    "CapabilityRisk",
    "CapabilityScope",
    "CapabilitySpec",
    "ProviderHealth",
    "Registration",
]

#: The effect kinds a capability may declare and a permission set may restrict.
EFFECTS = frozenset({"read", "write", "network", "execute", "persistence"})


class CapabilityRisk(enum.IntEnum):
    """How much harm a capability can do: L0 read-only … L3 destructive."""

    READ_ONLY = 0
    ISOLATED_WRITE = 1
    SENSITIVE = 2
    DESTRUCTIVE = 3

    # The seeds spell levels L0..L3; these aliases keep that spelling working.
    L0 = 0
    L1 = 1
    L2 = 2
    L3 = 3

    @classmethod
    def coerce(cls, value: Any) -> CapabilityRisk:
        """Read a risk from a member, an int 0-3, ``"L2"`` or a member name."""
        if isinstance(value, CapabilityRisk):
            return value
        if isinstance(value, bool):
            raise ConfigurationError("LA-CONFIG", f"invalid risk level {value!r}")
        if isinstance(value, int) and 0 <= value <= 3:
            return cls(value)
        if isinstance(value, str):
            text = value.strip().upper()
            if text in cls.__members__:
                return cls.__members__[text]
        raise ConfigurationError(
            "LA-CONFIG",
            f"invalid risk level {value!r}",
            hint="Use CapabilityRisk.L0..L3, an int 0-3 or a string 'L0'..'L3'.",
        )


class CapabilityScope(str, enum.Enum):
    """Where a provider registration applies; higher scopes shadow lower ones."""

    DEFAULT = "default"
    RUNTIME = "runtime"
    SESSION = "session"
    AGENT = "agent"

    @property
    def rank(self) -> int:
        """Resolution precedence: agent (3) > session (2) > runtime (1) > default (0)."""
        return _SCOPE_RANK[self]


_SCOPE_RANK = {
    CapabilityScope.DEFAULT: 0,
    CapabilityScope.RUNTIME: 1,
    CapabilityScope.SESSION: 2,
    CapabilityScope.AGENT: 3,
}


@dataclass(frozen=True)
class CapabilitySpec:
    """One capability: its effects, risk, limits and whether it needs approval."""

    name: str
    description: str = ""
    risk: CapabilityRisk = CapabilityRisk.READ_ONLY
    read: bool = False
    write: bool = False
    network: bool = False
    execute: bool = False
    persistent: bool = False
    cancellable: bool = False
    resumable: bool = False
    timeout: float | None = None
    output_limit: int | None = None
    requires_sandbox: bool = False
    requires_approval: bool = False
    ui_type: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    if TYPE_CHECKING:
        # What __post_init__ accepts: ``risk`` as a member, an int 0-3 or "L0".."L3".
        def __init__(
            self,
            name: str,
            description: str = "",
            risk: CapabilityRisk | int | str = CapabilityRisk.READ_ONLY,
            read: bool = False,
            write: bool = False,
            network: bool = False,
            execute: bool = False,
            persistent: bool = False,
            cancellable: bool = False,
            resumable: bool = False,
            timeout: float | None = None,
            output_limit: int | None = None,
            requires_sandbox: bool = False,
            requires_approval: bool = False,
            ui_type: str | None = None,
            metadata: Mapping[str, Any] = ...,
        ) -> None: ...

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigurationError("LA-CONFIG", "CapabilitySpec needs a non-empty name")
        object.__setattr__(self, "risk", CapabilityRisk.coerce(self.risk))
        if self.timeout is not None and not (
            isinstance(self.timeout, (int, float)) and self.timeout > 0
        ):
            raise ConfigurationError(
                "LA-CONFIG", f"capability {self.name!r}: timeout must be > 0, got {self.timeout!r}"
            )
        if self.output_limit is not None and not (
            isinstance(self.output_limit, int) and self.output_limit > 0
        ):
            raise ConfigurationError(
                "LA-CONFIG",
                f"capability {self.name!r}: output_limit must be an int > 0, got {self.output_limit!r}",
            )

    @property
    def effects(self) -> frozenset[str]:
        """The effect kinds this capability declares (a subset of :data:`EFFECTS`)."""
        flags = {
            "read": self.read,
            "write": self.write,
            "network": self.network,
            "execute": self.execute,
            "persistence": self.persistent,
        }
        return frozenset(name for name, on in flags.items() if on)

    @property
    def sensitive(self) -> bool:
        """Whether the capability writes, reaches the network, executes or persists."""
        return bool(self.effects - {"read"}) or self.risk >= CapabilityRisk.SENSITIVE

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "name": self.name,
            "description": self.description,
            "risk": f"L{int(self.risk)}",
            "effects": sorted(self.effects),
            "cancellable": self.cancellable,
            "resumable": self.resumable,
            "timeout": self.timeout,
            "output_limit": self.output_limit,
            "requires_sandbox": self.requires_sandbox,
            "requires_approval": self.requires_approval,
            "ui_type": self.ui_type,
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class ProviderHealth:
    """The health a provider reports."""

    healthy: bool = True
    status: str = "ok"
    message: str | None = None
    degraded_capabilities: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)


@runtime_checkable
class CapabilityProvider(Protocol):
    """A provider of capabilities with an async lifecycle.

    Lifecycle methods (``mount``, ``start``, ``health``, ``reload``, ``stop``,
    ``unmount``) and ``invoke`` may be sync or async; the registry awaits either.
    """

    name: str
    version: str
    capabilities: Mapping[str, CapabilitySpec]


class BaseCapabilityProvider:
    """A convenient provider base: holds specs, no-op lifecycle, ``invoke`` dispatches to handlers."""

    name: str = "provider"
    version: str = "0"

    def __init__(
        self,
        capabilities: Iterable[CapabilitySpec] | Mapping[str, CapabilitySpec] = (),
        *,
        name: str | None = None,
        version: str | None = None,
        handlers: Mapping[str, Any] | None = None,
    ) -> None:
        specs = capabilities.values() if isinstance(capabilities, Mapping) else capabilities
        self.capabilities: dict[str, CapabilitySpec] = {}
        for spec in specs:
            if not isinstance(spec, CapabilitySpec):
                raise ConfigurationError(
                    "LA-CONFIG", f"expected a CapabilitySpec, got {type(spec).__name__}"
                )
            self.capabilities[spec.name] = spec
        if name is not None:
            self.name = name
        if version is not None:
            self.version = version
        self.handlers: dict[str, Any] = dict(handlers or {})

    async def mount(self, context: Any = None) -> None:
        """Acquire what the provider needs for ``context``."""

    async def start(self) -> None:
        """Begin serving."""

    async def health(self) -> ProviderHealth:
        """Report health."""
        return ProviderHealth()

    async def reload(self, config: Mapping[str, Any] | None = None) -> None:
        """Apply new configuration."""

    async def stop(self) -> None:
        """Stop serving."""

    async def unmount(self) -> None:
        """Release everything acquired in :meth:`mount`."""

    async def invoke(self, capability: str, **arguments: Any) -> Any:
        """Call the handler registered for ``capability``."""
        handler = self.handlers.get(capability)
        if handler is None:
            raise PluginError(
                "LA-PROVIDER-NOT-FOUND", f"{self.name} has no handler for {capability!r}"
            )
        if inspect.iscoroutinefunction(handler):
            return await handler(**arguments)
        # A sync handler may block (files, network): run it in a worker thread.
        result = await asyncio.to_thread(handler, **arguments)
        return await result if inspect.isawaitable(result) else result


@dataclass
class Registration:
    """One provider registered in one scope (and, for session/agent scope, one owner)."""

    provider: Any
    scope: CapabilityScope
    owner_id: str | None
    order: int
    state: str = "registered"

    @property
    def name(self) -> str:
        """The provider's name."""
        return str(getattr(self.provider, "name", type(self.provider).__name__))

    def visible_to(self, context: Any) -> bool:
        """Whether this registration applies to ``context`` (session and agent owners)."""
        if self.owner_id is None or self.scope in (
            CapabilityScope.DEFAULT,
            CapabilityScope.RUNTIME,
        ):
            return True
        if context is None:
            return False
        if self.scope is CapabilityScope.SESSION:
            return getattr(context, "session_id", None) == self.owner_id
        return getattr(context, "agent_id", None) == self.owner_id


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _specs_of(provider: Any) -> Mapping[str, CapabilitySpec]:
    specs = getattr(provider, "capabilities", None)
    if not isinstance(specs, Mapping):
        raise ConfigurationError(
            "LA-CONFIG",
            f"provider {getattr(provider, 'name', provider)!r} has no capabilities mapping",
            hint="Give the provider a `capabilities: dict[str, CapabilitySpec]` attribute.",
        )
    return specs
