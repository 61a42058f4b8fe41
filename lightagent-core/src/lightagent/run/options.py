"""Checks of constructor and ``run()`` arguments, and resolution of models, tools and stores."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from lightagent.errors import ConfigurationError, LightAgentError, PluginError
from lightagent.results import RESULT_FORMATS, STREAM_RESULT_FORMATS

__all__ = [
    "UNAVAILABLE",
    "check_result_format",
    "check_unavailable",
    "positive_int",
    "refuse_unknown",
    "resolve_model",
    "resolve_store",
    "resolve_tool",
]

#: "Not in this version": seeds' ``LightAgent()`` parameters whose subsystem lightagent-core
#: does not have yet -> the value that means "not used" (accepted, so seeds code that
#: passes it still runs). Any other value is ``LA-CONFIG``, never ignored. They are not in
#: the constructor's signature: when a subsystem lands, delete its row here and add the
#: real parameter to ``LightAgent.__init__``.
UNAVAILABLE: dict[str, Any] = {
    "websocket_base_url": None,
}

#: Where a refused parameter's job is done instead, when somewhere already does it.
_HINTS: dict[str, str] = {}


def check_unavailable(values: dict[str, Any]) -> dict[str, Any]:
    """Refuse a "not used" value of an :data:`UNAVAILABLE` parameter; returns the rest of ``values``."""
    rest = {}
    for name, value in values.items():
        if name not in UNAVAILABLE:
            rest[name] = value
            continue
        default = UNAVAILABLE[name]
        if value is default or value == default:
            continue
        raise ConfigurationError(
            "LA-CONFIG",
            f"LightAgent({name}=...) is not available in lightagent-core 0.1",
            hint=_HINTS.get(
                name,
                f"Leave {name} at its default ({default!r}); this subsystem ships in a later version or a plugin.",
            ),
            details={"parameter": name},
        )
    return rest


def refuse_unknown(where: str, unknown: Iterable[str], known: Iterable[str]) -> None:
    """Raise ``LA-CONFIG`` naming each unknown keyword of ``where``, with the closest known one."""
    names = sorted(unknown)
    if not names:
        return
    import difflib

    choices = sorted(known)
    guesses = {n: difflib.get_close_matches(n, choices, n=1, cutoff=0.6) for n in names}
    meant = [f"{g[0]}= instead of {n}=" for n, g in guesses.items() if g]
    hint = f"Did you mean {'; '.join(meant)}? " if meant else ""
    hint += f"See docs/agent.md for the {where} parameters."
    raise ConfigurationError(
        "LA-CONFIG",
        f"unknown {where} argument(s): {', '.join(names)}",
        hint=hint,
        details={"unknown": names, "did_you_mean": {n: g[0] for n, g in guesses.items() if g}},
    )


def check_result_format(result_format: str, stream: bool) -> None:
    """``str``/``object``/``dict`` without streaming, ``str``/``event`` with it."""
    allowed = STREAM_RESULT_FORMATS if stream else RESULT_FORMATS
    if result_format not in allowed:
        mode = "stream=True" if stream else "stream=False"
        raise ConfigurationError(
            "LA-CONFIG",
            f"result_format={result_format!r} is not valid with {mode}",
            hint=f"Use one of {', '.join(map(repr, allowed))} with {mode}.",
            details={"result_format": result_format, "stream": stream},
        )


def positive_int(name: str, value: Any, *, minimum: int = 0) -> int:
    """``value`` as an int >= ``minimum`` or a ConfigurationError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(
            "LA-CONFIG",
            f"{name} must be an integer >= {minimum}, got {value!r}",
            details={"parameter": name},
        )
    return value


def _registry() -> Any:
    try:
        from lightagent.plugins import get_registry
    except ImportError:
        return None
    return get_registry()


def resolve_model(
    model: Any,
    *,
    api_key: str | None,
    base_url: str | None,
    provider: str | None,
    client: Any = None,
) -> Any:
    """A ``Model`` object for the agent's ``model=``.

    ``model`` is a model name (built by the ``"openai"`` provider, or the one ``provider=``
    names), ``("provider", {configuration})`` / ``{"provider": ..., ...}``, or an object
    following ``Model``.
    """
    from lightagent.providers import provider_reference

    reference = None if isinstance(model, str) else provider_reference(model)
    if reference is not None:
        provider, config = reference
        model = config.pop("model", None)
        api_key = config.pop("api_key", api_key)
        base_url = config.pop("base_url", base_url)
        client = config.pop("client", client)
    else:
        config = {}
    if model is not None and not isinstance(model, str):
        return model
    name = model or os.environ.get("LIGHTAGENT_MODEL")
    if name is None and provider in (None, "openai"):
        name = "gpt-4o-mini"
    factory = None
    registry = _registry()
    if registry is not None:
        try:
            factory = registry.get("model", provider or "openai").load()
        except PluginError:
            if provider:
                raise
    elif provider:
        raise ConfigurationError("LA-CONFIG", f"provider={provider!r} needs the plugin registry")
    if factory is None:
        try:
            from lightagent.models.openai_compat import OpenAIModel
        except ImportError as exc:
            raise ConfigurationError(
                "LA-CONFIG",
                f"the OpenAI-compatible model is not available: {exc}",
                hint="Install lightagent-core with its openai dependency, or pass model=<a Model object>.",
            ) from exc
        factory = OpenAIModel
    if not callable(factory) or (hasattr(factory, "complete") and not isinstance(factory, type)):
        if config:
            from lightagent.providers import build_provider

            build_provider("model", provider or "openai", factory, config, param="model")
        return factory  # a ready Model instance was registered
    offered = {"model": name, "api_key": api_key, "base_url": base_url, "client": client}
    kwargs = _accepted(factory, {k: v for k, v in offered.items() if v is not None})
    if config:
        from lightagent.providers import build_provider

        return build_provider(
            "model", provider or "openai", factory, {**kwargs, **config}, param="model"
        )
    try:
        return factory(**kwargs)
    except LightAgentError:
        raise
    except TypeError as exc:
        raise ConfigurationError(
            "LA-CONFIG",
            f"the model provider {provider or 'openai'!r} could not be built with {sorted(kwargs)}: {exc}",
            hint="A model provider is a Model instance, or a class/factory taking keyword "
            "arguments among model=, api_key=, base_url= (docs/agent.md), or pass "
            'model=("provider", {...configuration}).',
        ) from exc


def _accepted(factory: Any, offered: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments among ``offered`` that ``factory``'s signature takes."""
    import inspect

    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read (some builtins): offer them all
        return offered
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return offered
    names = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return {k: v for k, v in offered.items() if k in names}


def resolve_tool(obj: Any) -> Any:
    """A tool or toolset for the agent.

    A name is looked up among the plugins' tools, then their toolsets;
    ``("name", {configuration})`` builds a registered toolset with that configuration.
    """
    from lightagent.providers import provider_reference, resolve_provider

    reference = provider_reference(obj) if isinstance(obj, (str, tuple, dict)) else None
    if reference is None:
        return obj
    name, config = reference
    registry = _registry()
    if registry is None:
        raise ConfigurationError("LA-CONFIG", f"tool name {name!r} needs the plugin registry")
    if not config and isinstance(obj, str) and ("tool", name) in registry:
        try:
            return registry.get("tool", name).load()
        except PluginError as exc:
            raise ConfigurationError(
                "LA-CONFIG",
                f"tool {name!r} cannot be loaded: {exc.message}",
                details={"tool": name},
            ) from exc
    if ("toolset", name) in registry or "://" in name:
        return resolve_provider("toolset", obj, param="tools", registry=registry)
    raise ConfigurationError(
        "LA-CONFIG",
        f"no tool or toolset named {name!r} is registered",
        hint="Pass the function or toolset itself, or install the plugin that registers it (`lightagent plugins`).",
        details={"tool": name},
    )


def resolve_store(store: Any) -> Any:
    """A session store instance for ``session_store=`` (any form of :mod:`lightagent.providers`)."""
    from lightagent.providers import resolve_provider

    return resolve_provider("session_store", store, param="session_store")
