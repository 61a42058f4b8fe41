"""Plugin loading: entry points of group ``lightagent``, loaded once, lazily, each one guarded.

A plugin that fails to import, fails to register, implements hooks nobody declares, or
requires a ``lightagent-core`` range that excludes the running version is recorded with a
one-line reason and skipped; it never breaks the host. Loading has two passes: every
plugin first adds the hookspecs it owns (``register_hookspecs``), then every plugin is
registered, so a plugin may implement another plugin's hooks whatever the load order.
Environment:

* ``LIGHTAGENT_LOAD_PLUGINS`` — comma-separated allow-list (set but empty: load none);
* ``LIGHTAGENT_DISABLE_PLUGINS`` — comma-separated names to skip;
* ``LIGHTAGENT_STRICT_PLUGINS=1`` — any failure raises :class:`PluginError` instead.
"""

from __future__ import annotations

import inspect
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from lightagent._version import __version__
from lightagent.errors import LightAgentError, PluginError
from lightagent.registry import ProviderEntry, Registry

__all__ = [
    "BUILTIN_PLUGIN",
    "ENTRY_POINT_GROUP",
    "PluginHost",
    "PluginInfo",
    "declared_hookspecs",
    "get_host",
    "get_registry",
    "reset_host",
]

ENTRY_POINT_GROUP = "lightagent"
BUILTIN_PLUGIN = "lightagent-core"


@dataclass
class PluginInfo:
    """What ``lightagent plugins`` shows of one plugin."""

    name: str
    distribution: str | None = None
    version: str | None = None
    status: str = "pending"  # loaded | failed | blocked | disabled
    error: str | None = None
    registered: dict[str, list[str]] = field(default_factory=dict)
    module: str | None = None
    builtin: bool = False
    #: Hooks this plugin declares for others to implement (``register_hookspecs``).
    hookspecs: list[str] = field(default_factory=list)
    #: Deprecations it relies on (e.g. a hook that moved to another distribution).
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "error": self.error,
            "registered": self.registered,
            "module": self.module,
            "builtin": self.builtin,
            "hookspecs": list(self.hookspecs),
            "warnings": list(self.warnings),
        }


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, LightAgentError):
        return f"[{exc.code}] {exc.message}"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _env_list(environ: Mapping[str, str], key: str) -> set[str] | None:
    raw = environ.get(key)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


class PluginHost:
    """One pluggy PluginManager plus the registry built from its ``register_*`` hooks.

    ``PluginHost()`` discovers installed entry points; tests build isolated hosts with
    ``PluginHost(entry_points=False, plugins=[("name", module)])``.
    """

    def __init__(
        self,
        *,
        entry_points: bool = True,
        plugins: Iterable[tuple[str, Any]] = (),
        builtins: bool = True,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._use_entry_points = entry_points
        self._extra = list(plugins)
        self._builtins = builtins
        self._environ = os.environ if environ is None else environ
        self._lock = threading.RLock()
        self._pm: Any = None
        self._infos: dict[str, PluginInfo] = {}
        self._objects: dict[str, Any] = {}
        self._registry: Registry | None = None
        self._loaded = False
        from lightagent.hookspecs import REGISTER_HOOKS

        #: kind -> register hook: the kernel's, plus what plugins declared.
        self._register_hooks: dict[str, str] = dict(REGISTER_HOOKS)
        self._spec_owners: dict[str, list[str]] = {}
        self._legacy: set[str] = set()

    @property
    def strict(self) -> bool:
        """Whether plugin failures raise instead of being recorded."""
        return _is_true(self._environ.get("LIGHTAGENT_STRICT_PLUGINS"))

    @property
    def pm(self) -> Any:
        """The underlying ``pluggy.PluginManager`` (plugins loaded)."""
        self.load()
        return self._pm

    def load(self) -> None:
        """Discover and register plugins once; later calls do nothing."""
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            import pluggy

            from lightagent import hookspecs

            self._pm = pluggy.PluginManager(hookspecs.PROJECT)
            self._pm.add_hookspecs(hookspecs)
            candidates: list[tuple[PluginInfo, Any]] = []
            if self._builtins:
                from lightagent import _builtins

                info = PluginInfo(
                    BUILTIN_PLUGIN,
                    BUILTIN_PLUGIN,
                    __version__,
                    module=_builtins.__name__,
                    builtin=True,
                )
                candidates.append((info, _builtins))
            for name, obj in self._extra:
                info = PluginInfo(name, module=getattr(obj, "__name__", type(obj).__name__))
                candidates.append((info, obj))
            if self._use_entry_points:
                candidates.extend(self._load_entry_points())
            for info, _obj in candidates:
                self._infos[info.name] = info
            # Pass 1: hooks owned by plugins; pass 2: every plugin's implementations.
            ready = [(i, o) for i, o in candidates if self._add_hookspecs(i, o)]
            self._add_legacy_hookspecs()
            for info, obj in ready:
                self._register(info, obj)
            self._loaded = True
            failed = [i for i in self._infos.values() if i.status in ("failed", "blocked")]
            if failed and self.strict:
                raise PluginError(
                    "LA-PLUGIN",
                    "; ".join(f"{i.name}: {i.error}" for i in failed),
                    hint=_strict_hint([i.name for i in failed]),
                    details={"plugins": [i.to_dict() for i in failed]},
                )

    def _selected(self, name: str) -> bool:
        allow = _env_list(self._environ, "LIGHTAGENT_LOAD_PLUGINS")
        deny = _env_list(self._environ, "LIGHTAGENT_DISABLE_PLUGINS") or set()
        return (allow is None or name in allow) and name not in deny

    def _load_entry_points(self) -> list[tuple[PluginInfo, Any]]:
        from importlib.metadata import entry_points

        loaded: list[tuple[PluginInfo, Any]] = []
        seen: set[str] = set()
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            if ep.name in seen or ep.name == BUILTIN_PLUGIN:
                continue  # one plugin per name, as pluggy requires
            seen.add(ep.name)
            dist = getattr(ep, "dist", None)
            info = PluginInfo(
                ep.name,
                distribution=getattr(dist, "name", None),
                version=getattr(dist, "version", None),
                module=ep.value,
            )
            self._infos[ep.name] = info
            if not self._selected(ep.name):
                info.status = "disabled"
                continue
            reason = _version_block(dist)
            if reason is not None:
                info.status, info.error = "blocked", reason
                continue
            try:
                obj = ep.load()
            except BaseException as exc:  # a plugin's import may raise anything
                if isinstance(exc, KeyboardInterrupt):
                    raise
                info.status, info.error = "failed", f"import failed: {_one_line(exc)}"
                continue
            loaded.append((info, obj))
        return loaded

    # -- plugin-owned hookspecs -----------------------------------------------------------
    @property
    def register_hooks(self) -> dict[str, str]:
        """Registry kind -> the hook that registers it (kernel and plugin-declared)."""
        self.load()
        return dict(self._register_hooks)

    def _add_hookspecs(self, info: PluginInfo, obj: Any) -> bool:
        """Call ``obj``'s ``register_hookspecs``; False (plugin failed) when it raises."""
        impl = _hookimpl_of(obj, "register_hookspecs")
        if impl is None:
            return True

        def add(specs: Any, *, kinds: Mapping[str, str] | None = None) -> None:
            self._declare(info, specs, kinds or {})

        try:
            _call_declared(impl, add=add)
        except Exception as exc:
            info.status, info.error = "failed", f"register_hookspecs: {_one_line(exc)}"
            return False
        return True

    def _declare(self, info: PluginInfo, specs: Any, kinds: Mapping[str, str]) -> None:
        new: dict[str, Any] = {}
        for name in dir(specs):
            if self._pm.parse_hookspec_opts(specs, name) is None:
                continue
            func = getattr(specs, name)
            caller = getattr(self._pm.hook, name, None)
            spec = getattr(caller, "spec", None)
            if spec is not None:
                if _argnames(spec.function) != _argnames(func):
                    raise PluginError(
                        "LA-PLUGIN",
                        f"hook {name} is already declared by "
                        f"{', '.join(self._spec_owners.get(name, ['lightagent-core']))} with "
                        f"arguments ({', '.join(_argnames(spec.function))}), not "
                        f"({', '.join(_argnames(func))})",
                    )
            else:
                new[name] = func
            self._spec_owners.setdefault(name, []).append(info.name)
            info.hookspecs.append(name)
        if new:
            self._pm.add_hookspecs(SimpleNamespace(**new))
        for kind, hook in kinds.items():
            if not isinstance(kind, str) or not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", kind):
                raise PluginError("LA-PLUGIN", f"invalid provider kind {kind!r}")
            if getattr(getattr(self._pm.hook, hook, None), "spec", None) is None:
                raise PluginError(
                    "LA-PLUGIN", f"kind {kind!r} names hook {hook!r}, which is not declared"
                )
            current = self._register_hooks.get(kind)
            if current is not None and current != hook:
                raise PluginError(
                    "LA-PLUGIN", f"kind {kind!r} is already registered through {current}"
                )
            self._register_hooks[kind] = hook

    def _add_legacy_hookspecs(self) -> None:
        from lightagent._legacy_hooks import LEGACY_HOOKS, legacy_specs

        missing = [
            hook
            for hook in LEGACY_HOOKS
            if getattr(getattr(self._pm.hook, hook, None), "spec", None) is None
        ]
        if not missing:
            return
        self._pm.add_hookspecs(legacy_specs(missing))
        for hook in missing:
            self._register_hooks.setdefault(LEGACY_HOOKS[hook][0], hook)
            self._legacy.add(hook)

    def _register(self, info: PluginInfo, obj: Any) -> None:
        self._infos[info.name] = info
        try:
            self._pm.register(obj, name=info.name)
        except Exception as exc:
            info.status, info.error = "failed", _one_line(exc)
            return
        unknown = [
            caller.name
            for caller in self._pm.get_hookcallers(obj) or ()
            if getattr(caller, "spec", None) is None
        ]
        if unknown:
            self._pm.unregister(obj)
            info.status = "failed"
            info.error = (
                f"unknown hook(s) {', '.join(sorted(unknown))}: not in lightagent {__version__}"
            )
            return
        info.status = "loaded"
        self._objects[info.name] = obj
        if self._legacy:
            from lightagent._legacy_hooks import LEGACY_HOOKS

            for hook in sorted(self._legacy):
                if _hookimpl_of(obj, hook) is not None:
                    owners = " or ".join(LEGACY_HOOKS[hook][1])
                    info.warnings.append(
                        f"{hook} is a hook of {owners} since lightagent-core 0.2; "
                        f"depend on {owners} (the core's fallback goes in 0.3)"
                    )

    def plugins(self) -> list[PluginInfo]:
        """Every plugin seen, with its status; building the registry fills in what each registered."""
        self.registry  # noqa: B018 - registration outcomes belong in the listing
        return sorted(self._infos.values(), key=lambda i: (not i.builtin, i.name))

    @property
    def registry(self) -> Registry:
        """The registry filled by every loaded plugin's ``register_*`` hooks (built once)."""
        if self._registry is not None:
            return self._registry
        with self._lock:
            if self._registry is None:
                self.load()
                self._registry = self._build_registry()
        return self._registry

    def _build_registry(self) -> Registry:
        registry = Registry()
        for info in sorted(self._infos.values(), key=lambda i: (not i.builtin, i.name)):
            if info.status != "loaded":
                continue
            entries: list[ProviderEntry] = []
            try:
                for kind, hook_name in self._register_hooks.items():
                    self._call_impl(
                        info.name, hook_name, register=_collector(kind, info.name, entries)
                    )
                registry.extend(entries)
            except Exception as exc:
                info.status, info.error = "failed", _one_line(exc)
                registry.remove_plugin(info.name)
                if self.strict:
                    raise PluginError(
                        "LA-PLUGIN", f"{info.name}: {info.error}", hint=_strict_hint([info.name])
                    ) from exc
                continue
            info.registered = registry.by_plugin(info.name)
        return registry

    def _call_impl(self, plugin: str, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call one plugin's implementation of a hook, passing only the arguments it declares."""
        results: list[Any] = []
        caller = getattr(self._pm.hook, hook_name, None)
        if caller is None:
            return results
        for impl in caller.get_hookimpls():
            if impl.plugin_name != plugin:
                continue
            results.append(impl.function(**{k: kwargs[k] for k in impl.argnames}))
        return results

    def call_each(self, hook_name: str, **kwargs: Any) -> dict[str, Any]:
        """Call a hook plugin by plugin, isolating failures; returns plugin -> result or exception."""
        self.load()
        out: dict[str, Any] = {}
        for info in self.plugins():
            if info.status != "loaded":
                continue
            try:
                results = self._call_impl(info.name, hook_name, **kwargs)
            except Exception as exc:
                if self.strict:
                    raise
                out[info.name] = exc
                continue
            if results:
                out[info.name] = results[0]
        return out

    def record_failure(self, plugin: str, error: BaseException) -> None:
        """Mark ``plugin`` failed (e.g. its command registration raised)."""
        info = self._infos.get(plugin)
        if info is not None:
            info.status, info.error = "failed", _one_line(error)


def _hookimpl_of(obj: Any, name: str) -> Any:
    from lightagent.hookspecs import PROJECT

    func = getattr(obj, name, None)
    return func if callable(func) and hasattr(func, f"{PROJECT}_impl") else None


def _argnames(func: Any) -> list[str]:
    try:
        return list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return []


def _call_declared(func: Any, **kwargs: Any) -> Any:
    """Call a hook implementation with only the arguments it declares (as pluggy does)."""
    return func(**{k: v for k, v in kwargs.items() if k in _argnames(func)})


def declared_hookspecs(plugins: Iterable[Any] = ()) -> dict[str, list[str]]:
    """Hook name -> arguments, for every hook a plugin may implement: the kernel's, the
    deprecated ones that moved to other distributions, and those ``plugins`` declare."""
    from lightagent import hookspecs
    from lightagent._legacy_hooks import LEGACY_HOOKS, legacy_specs

    marker = f"{hookspecs.PROJECT}_spec"
    table: dict[str, list[str]] = {}

    def take(specs: Any, *, kinds: Mapping[str, str] | None = None) -> None:
        for name in dir(specs):
            func = getattr(specs, name, None)
            if callable(func) and hasattr(func, marker):
                table.setdefault(name, _argnames(func))

    take(hookspecs)
    for plugin in plugins:
        impl = _hookimpl_of(plugin, "register_hookspecs")
        if impl is not None:
            _call_declared(impl, add=take)
    take(legacy_specs([h for h in LEGACY_HOOKS if h not in table]))
    return table


def _strict_hint(names: list[str]) -> str:
    listed = ",".join(names)
    return (
        f"LIGHTAGENT_STRICT_PLUGINS is set: fix or upgrade {listed}, skip it with "
        f"LIGHTAGENT_DISABLE_PLUGINS={listed}, or unset LIGHTAGENT_STRICT_PLUGINS; "
        "`lightagent plugins` shows every plugin's status, strict mode or not."
    )


def _collector(kind: str, plugin: str, sink: list[ProviderEntry]) -> Callable[..., None]:
    def register(name: str, provider: Any, *, priority: int = 0, scope: str = "runtime") -> None:
        Registry._check(kind, name, provider, plugin, priority, scope)
        sink.append(ProviderEntry(kind, name, provider, plugin, priority, scope))

    return register


def _version_block(dist: Any) -> str | None:
    """A one-line reason when ``dist`` requires a lightagent-core range excluding this version."""
    if dist is None:
        return None
    try:
        from packaging.requirements import InvalidRequirement, Requirement
        from packaging.utils import canonicalize_name
    except ImportError:  # pragma: no cover - packaging is a core dependency
        return None
    for raw in dist.requires or ():
        try:
            req = Requirement(raw)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) != BUILTIN_PLUGIN:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        if not req.specifier.contains(__version__, prereleases=True):
            return (
                f"requires lightagent-core{req.specifier}, but {__version__} is running; "
                "upgrade the plugin or install a matching core"
            )
    return None


_host: PluginHost | None = None
_host_lock = threading.Lock()


def get_host() -> PluginHost:
    """The process-wide plugin host (created on first use; plugins load on first registry use)."""
    global _host
    if _host is None:
        with _host_lock:
            if _host is None:
                _host = PluginHost()
    return _host


def get_registry() -> Registry:
    """The process-wide registry of every loaded plugin's providers."""
    return get_host().registry


def reset_host(host: PluginHost | None = None) -> None:
    """Replace the process-wide host (tests); None makes the next use rediscover plugins."""
    global _host
    with _host_lock:
        _host = host
