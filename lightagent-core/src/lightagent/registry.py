"""The provider registry: what plugins and users registered, by kind, name and scope."""

from __future__ import annotations

import builtins
import importlib
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ConfigurationError, PluginError

__all__ = ["KINDS", "SCOPES", "Conflict", "ProviderEntry", "Registry", "load_ref"]

#: The kernel's provider kinds, one per ``register_*`` hook (``lightagent.hookspecs.REGISTER_HOOKS``).
#: Plugins add kinds with hooks of their own (``workflow``, ``verifier``, ``artifact_store`` …).
KINDS = (
    "model",
    "tool",
    "toolset",
    "memory",
    "session_store",
    "retrieval",
    "guardrail",
    "hook",
    "exporter",
    "agent_extension",
    "tool_selector",
)
#: Scopes in rising precedence: an agent-scope provider shadows a session one, which shadows runtime.
SCOPES = ("runtime", "session", "agent")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$")
_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def load_ref(ref: str) -> Any:
    """Import a ``"package.module:attribute"`` reference."""
    module_name, _, attr = ref.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise PluginError(
            "LA-PLUGIN",
            f"cannot load {ref!r}: {type(exc).__name__}: {exc}",
            hint="Install the distribution that provides it, or fix the reference.",
        ) from exc
    return value


@dataclass(frozen=True)
class ProviderEntry:
    """One registration: a provider object (or lazy ``"module:attr"`` reference) and where it came from."""

    kind: str
    name: str
    provider: Any
    plugin: str = "user"
    priority: int = 0
    scope: str = "runtime"
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_lazy(self) -> bool:
        """Whether the provider is a reference not imported yet."""
        return isinstance(self.provider, str) and "value" not in self._cache

    def load(self) -> Any:
        """The provider object, importing a lazy reference on first use."""
        if not isinstance(self.provider, str):
            return self.provider
        if "value" not in self._cache:
            self._cache["value"] = load_ref(self.provider)
        return self._cache["value"]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description (the provider is shown as its reference or type)."""
        target = self.provider if isinstance(self.provider, str) else _describe(self.provider)
        return {
            "kind": self.kind,
            "name": self.name,
            "plugin": self.plugin,
            "priority": self.priority,
            "scope": self.scope,
            "provider": target,
        }


def _describe(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or type(obj).__module__
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}:{name}"


@dataclass(frozen=True)
class Conflict:
    """A name registered more than once for one kind: at another scope (shadowed) or refused."""

    kind: str
    name: str
    winner: ProviderEntry
    other: ProviderEntry
    resolution: str  # "shadowed" (lower scope hidden) or "refused" (same scope, second refused)

    def describe(self) -> str:
        """One line naming both sides."""
        return (
            f"{self.kind} {self.name!r}: {self.winner.plugin} ({self.winner.scope}) "
            f"{self.resolution} {self.other.plugin} ({self.other.scope})"
        )


class Registry:
    """Providers by kind and name, with priority ordering, scopes and conflict diagnostics.

    A second registration of the same kind, name and scope raises
    :class:`PluginError` (``LA-PLUGIN-CONFLICT``) naming both plugins, unless
    ``replace=True``. The same name at a higher scope shadows the lower one and is
    reported by :meth:`conflicts`.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str], ProviderEntry] = {}
        self._refused: list[Conflict] = []
        self._lock = threading.RLock()
        # What :meth:`derived` built from the entries; any change to them drops it all. Built
        # under a lock of its own: a build imports plugin modules, which may register.
        self._derived: dict[str, Any] = {}
        self._derived_lock = threading.RLock()

    def register(
        self,
        kind: str,
        name: str,
        provider: Any,
        *,
        plugin: str = "user",
        priority: int = 0,
        scope: str = "runtime",
        replace: bool = False,
    ) -> ProviderEntry:
        """Add a provider; returns its entry."""
        entry = self._check(kind, name, provider, plugin, priority, scope)
        key = (kind, name, scope)
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None and not replace:
                self._refused.append(Conflict(kind, name, existing, entry, "refused"))
                raise PluginError(
                    "LA-PLUGIN-CONFLICT",
                    f"{kind} provider {name!r} is registered by both "
                    f"{existing.plugin!r} and {plugin!r}",
                    details={"kind": kind, "name": name, "plugins": [existing.plugin, plugin]},
                )
            self._entries[key] = entry
            self._derived.clear()
        return entry

    @staticmethod
    def _check(
        kind: str, name: str, provider: Any, plugin: str, priority: int, scope: str
    ) -> ProviderEntry:
        if not isinstance(kind, str) or not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", kind):
            raise ConfigurationError("LA-CONFIG", f"invalid provider kind {kind!r}")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigurationError(
                "LA-CONFIG",
                f"invalid {kind} provider name {name!r}",
                hint="Names start with a letter or digit and use letters, digits and _.:/-",
            )
        if scope not in SCOPES:
            raise ConfigurationError("LA-CONFIG", f"invalid scope {scope!r}; use one of {SCOPES}")
        if provider is None or (isinstance(provider, str) and not _REF.fullmatch(provider)):
            raise ConfigurationError(
                "LA-CONFIG",
                f"{kind} provider {name!r} must be an object or a 'module:attribute' reference",
            )
        if not isinstance(priority, int):
            raise ConfigurationError("LA-CONFIG", f"priority must be an int, not {priority!r}")
        return ProviderEntry(kind, name, provider, plugin, priority, scope)

    def unregister(self, kind: str, name: str, *, scope: str = "runtime") -> bool:
        """Remove one registration; returns whether it existed."""
        with self._lock:
            self._derived.clear()
            return self._entries.pop((kind, name, scope), None) is not None

    def remove_plugin(self, plugin: str) -> int:
        """Remove every registration of ``plugin``; returns how many."""
        with self._lock:
            keys = [k for k, e in self._entries.items() if e.plugin == plugin]
            for key in keys:
                del self._entries[key]
            self._derived.clear()
            return len(keys)

    def get(self, kind: str, name: str) -> ProviderEntry:
        """The entry that wins for ``name``: the highest scope it is registered at."""
        with self._lock:
            for scope in reversed(SCOPES):
                entry = self._entries.get((kind, name, scope))
                if entry is not None:
                    return entry
        available = ", ".join(self.names(kind)) or "none"
        raise PluginError(
            "LA-PROVIDER-NOT-FOUND",
            f"no {kind} provider named {name!r} (available: {available})",
            details={"kind": kind, "name": name},
        )

    def __contains__(self, key: tuple[str, str]) -> bool:
        kind, name = key
        with self._lock:
            return any((kind, name, scope) in self._entries for scope in SCOPES)

    def resolve(self, kind: str, ref: Any) -> Any:
        """A provider by name, or ``ref`` itself when it is already an instance."""
        if isinstance(ref, str):
            return self.get(kind, ref).load()
        if ref is None:
            raise ConfigurationError("LA-CONFIG", f"no {kind} provider given")
        return ref

    def list(self, kind: str | None = None) -> list[ProviderEntry]:
        """Winning entries (one per kind and name), ordered by priority (high first), then name."""
        with self._lock:
            winners: dict[tuple[str, str], ProviderEntry] = {}
            for (k, name, _scope), entry in self._entries.items():
                if kind is not None and k != kind:
                    continue
                current = winners.get((k, name))
                if current is None or SCOPES.index(entry.scope) > SCOPES.index(current.scope):
                    winners[(k, name)] = entry
        return sorted(winners.values(), key=lambda e: (e.kind, -e.priority, e.name))

    def names(self, kind: str) -> builtins.list[str]:
        """Registered names of ``kind`` in resolution order."""
        return [entry.name for entry in self.list(kind)]

    def default(self, kind: str) -> ProviderEntry | None:
        """The highest-priority provider of ``kind``, or None."""
        entries = self.list(kind)
        return entries[0] if entries else None

    def conflicts(self) -> builtins.list[Conflict]:
        """Shadowed registrations across scopes, and refused duplicates at the same scope."""
        with self._lock:
            found = list(self._refused)
            by_name: dict[tuple[str, str], list[ProviderEntry]] = {}
            for (kind, name, _scope), entry in self._entries.items():
                by_name.setdefault((kind, name), []).append(entry)
        for (kind, name), entries in by_name.items():
            if len(entries) < 2:
                continue
            entries.sort(key=lambda e: SCOPES.index(e.scope), reverse=True)
            for other in entries[1:]:
                found.append(Conflict(kind, name, entries[0], other, "shadowed"))
        return found

    def by_plugin(self, plugin: str) -> dict[str, builtins.list[str]]:
        """What ``plugin`` registered: kind -> names."""
        with self._lock:
            out: dict[str, list[str]] = {}
            for entry in self._entries.values():
                if entry.plugin == plugin:
                    out.setdefault(entry.kind, []).append(entry.name)
        return {kind: sorted(names) for kind, names in sorted(out.items())}

    def derived(self, key: str, build: Callable[[Registry], Any]) -> Any:
        """``build(self)``, made once and kept until a registration changes (the agent
        extensions and the tool selector are looked up this way on every construction or run)."""
        with self._derived_lock:
            if key not in self._derived:
                self._derived[key] = build(self)
            return self._derived[key]

    def child(self) -> Registry:
        """A copy that can take agent- or session-scope registrations without touching this one."""
        clone = Registry()
        with self._lock:
            clone._entries = dict(self._entries)
        return clone

    def extend(self, entries: Iterable[ProviderEntry]) -> None:
        """Add entries all-or-nothing: on a conflict none of them stays registered."""
        added: list[ProviderEntry] = []
        try:
            for entry in entries:
                added.append(
                    self.register(
                        entry.kind,
                        entry.name,
                        entry.provider,
                        plugin=entry.plugin,
                        priority=entry.priority,
                        scope=entry.scope,
                    )
                )
        except Exception:
            with self._lock:
                for entry in added:
                    self._entries.pop((entry.kind, entry.name, entry.scope), None)
                self._derived.clear()
            raise
