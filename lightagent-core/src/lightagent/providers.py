"""Resolving a provider from what a user wrote: an instance, a name, a URL, or a name with configuration.

Every ``LightAgent`` parameter that names a provider (``session_store=``, ``memory=``,
``retrieval=``, ``model=``, toolsets in ``tools=``) accepts the same forms:

* an instance: used as is;
* ``"name"``: the provider registered under that name, built with no configuration;
* ``("name", {"key": value, ...})``: **the canonical form**: the registered factory is
  called with that configuration as keyword arguments;
* ``{"provider": "name", "key": value, ...}``: the same, as one dict (handy in config files);
* ``"scheme://..."`` (a URL): the provider registered for that URL scheme (as
  ``"scheme://"``; ``postgresql+psycopg://`` looks up ``postgresql+psycopg://`` then
  ``postgresql://``), called with ``url=<the URL>``.

A configuration that misses a required key, names a key the provider does not take, or
is given to a provider that takes none is refused with ``LA-CONFIG``, naming the
provider and the key, before the provider is called.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from lightagent.errors import ConfigurationError, LightAgentError, PluginError

__all__ = ["build_provider", "find_provider", "provider_reference", "resolve_provider"]

_LABELS = {"session_store": "session store", "toolset": "toolset", "tool": "tool"}
#: (kind, URL scheme without its +driver) -> the extra whose distribution registers it.
_URL_EXTRAS = {
    ("session_store", "postgresql"): "postgres",
    ("session_store", "postgres"): "postgres",
}


def _label(kind: str) -> str:
    return _LABELS.get(kind, kind)


def provider_reference(spec: Any) -> tuple[str, dict[str, Any]] | None:
    """``(name, configuration)`` when ``spec`` names a provider, else None (an instance)."""
    if isinstance(spec, str):
        if "://" in spec:
            return spec.split("://", 1)[0].lower() + "://", {"url": spec}
        return spec, {}
    if (
        isinstance(spec, tuple)
        and len(spec) == 2
        and isinstance(spec[0], str)
        and isinstance(spec[1], Mapping)
    ):
        return spec[0], dict(spec[1])
    if isinstance(spec, Mapping) and isinstance(spec.get("provider"), str):
        config = dict(spec)
        return config.pop("provider"), config
    return None


def _registry() -> Any:
    from lightagent.plugins import get_registry

    return get_registry()


def find_provider(registry: Any, kind: str, name: str, param: str) -> tuple[str, Any]:
    """The registered name and loaded provider for ``name`` (a URL scheme falls back from
    ``scheme+driver://`` to ``scheme://``); ``LA-CONFIG`` or ``LA-MISSING-EXTRA`` if none."""
    candidates = [name]
    if name.endswith("://") and "+" in name:
        candidates.append(name.split("+", 1)[0] + "://")  # postgresql+psycopg -> postgresql
    for candidate in candidates:
        if (kind, candidate) in registry:
            return candidate, registry.get(kind, candidate).load()
    names = registry.names(kind)
    if name.endswith("://"):
        extra = _URL_EXTRAS.get((kind, name.split("+", 1)[0].removesuffix("://")))
        if extra is not None:
            from lightagent.extras import missing_extra
            from lightagent.vocabulary import distribution

            raise missing_extra(f"a {_label(kind)} for {name} URLs", distribution(extra), extra)
        schemes = [n for n in names if n.endswith("://")]
        raise ConfigurationError(
            "LA-CONFIG",
            f"no {_label(kind)} provider handles {name} URLs "
            f"(URL schemes registered: {', '.join(schemes) or 'none'})",
            hint=f'Use a registered name with configuration, e.g. {param}=("name", {{...}}); '
            "`lightagent plugins` lists the providers.",
            details={"kind": kind, "provider": name},
        )
    raise ConfigurationError(
        "LA-CONFIG",
        f"no {_label(kind)} provider named {name!r} is registered "
        f"(available: {', '.join(n for n in names if not n.endswith('://')) or 'none'})",
        hint="Pass an instance, or install the plugin that registers it (`lightagent plugins`).",
        details={"kind": kind, "provider": name},
    )


def _is_factory(obj: Any) -> bool:
    return isinstance(obj, type) or inspect.isfunction(obj) or inspect.ismethod(obj)


def build_provider(
    kind: str, name: str, factory: Any, config: Mapping[str, Any], *, param: str | None = None
) -> Any:
    """Call ``factory(**config)`` after checking the keys against its signature (``LA-CONFIG``)."""
    param = param or kind
    config = dict(config)
    if not _is_factory(factory):
        if config:
            raise ConfigurationError(
                "LA-CONFIG",
                f"{_label(kind)} provider {name!r} is a ready instance and takes no configuration "
                f"(got {', '.join(sorted(config))})",
                hint=f'Pass {param}="{name}" without configuration.',
                details={"kind": kind, "provider": name, "keys": sorted(config)},
            )
        return factory
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        params = list(signature.parameters.values())
        if isinstance(factory, type) and params and params[0].name == "self":
            params = params[1:]
        accepts_any = any(p.kind is p.VAR_KEYWORD for p in params)
        named = {p.name: p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        missing = [p.name for p in named.values() if p.default is p.empty and p.name not in config]
        positional_only = [
            p.name for p in params if p.kind is p.POSITIONAL_ONLY and p.default is p.empty
        ]
        unknown = [k for k in config if k not in named and not accepts_any]
        if missing or positional_only:
            key = (missing or positional_only)[0]
            raise ConfigurationError(
                "LA-CONFIG",
                f"{_label(kind)} provider {name!r} needs the configuration key {key!r}"
                + (f" (also missing: {', '.join(missing[1:])})" if len(missing) > 1 else ""),
                hint=f'Pass {param}=("{name}", {{"{key}": ...}})'
                + (" or a URL such as 'sqlite:///path.db'" if key == "url" else "")
                + ".",
                details={"kind": kind, "provider": name, "missing": missing or positional_only},
            )
        if unknown:
            raise ConfigurationError(
                "LA-CONFIG",
                f"{_label(kind)} provider {name!r} does not take the configuration key "
                f"{unknown[0]!r} (it takes: {', '.join(named) or 'nothing'})",
                details={"kind": kind, "provider": name, "unknown": unknown},
            )
    try:
        return factory(**config)
    except LightAgentError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(
            "LA-CONFIG",
            f"{_label(kind)} provider {name!r} refused its configuration: {type(exc).__name__}: {exc}",
            details={"kind": kind, "provider": name, "keys": sorted(config)},
        ) from exc


def resolve_provider(
    kind: str, spec: Any, *, param: str | None = None, registry: Any = None
) -> Any:
    """The provider object for ``spec`` (see the module docstring for the accepted forms)."""
    reference = provider_reference(spec)
    if reference is None:
        if spec is None:
            raise ConfigurationError("LA-CONFIG", f"no {_label(kind)} provider given")
        return spec
    name, config = reference
    try:
        registry = registry if registry is not None else _registry()
    except ImportError as exc:  # pragma: no cover - pluggy is a core dependency
        raise ConfigurationError(
            "LA-CONFIG", f"{param or kind}={name!r} needs the plugin registry: {exc}"
        ) from exc
    try:
        found, factory = find_provider(registry, kind, name, param or kind)
    except PluginError as exc:  # a lazy reference that cannot be imported
        raise ConfigurationError(
            "LA-CONFIG",
            f"{_label(kind)} provider {name!r} cannot be loaded: {exc.message}",
            hint=exc.hint,
            details={"kind": kind, "provider": name},
        ) from exc
    return build_provider(kind, found, factory, config, param=param)
