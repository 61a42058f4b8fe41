"""Checks of constructor and ``run()`` arguments, and resolution of models, tools and stores."""

from __future__ import annotations

import os
from typing import Any

from lightagent.errors import ConfigurationError, LightAgentError, PluginError
from lightagent.results import RESULT_FORMATS, STREAM_RESULT_FORMATS

__all__ = [
    "UNAVAILABLE",
    "check_result_format",
    "check_unavailable",
    "positive_int",
    "resolve_model",
    "resolve_store",
    "resolve_tool",
]

#: Seeds' constructor parameters whose subsystem is not part of lightagent-core 0.1,
#: with the value that means "not used". Any other value is refused, never ignored.
UNAVAILABLE: dict[str, Any] = {
    "websocket_base_url": None,
    "memory": None,
    "memory_policy": None,
    "memory_namespace": None,
    "tree_of_thought": False,
    "tot_model": None,
    "tot_api_key": None,
    "tot_base_url": None,
    "self_learning": False,
    "skills_directories": None,
    "auto_discover_skills": True,
    "tracetools": None,
    "enable_unsafe_python": False,
    "budget_limits": None,
    "context_budget": None,
    "context_compactor": None,
}


#: Where a refused parameter's job is done instead, when somewhere already does it.
_HINTS = {
    "tracetools": "Trace to Langfuse or any OpenTelemetry backend with lightagent-otel: "
    "LightAgentInstrumentor().instrument(tracer_provider=...) (docs/observability.md).",
}


def check_unavailable(values: dict[str, Any]) -> None:
    """Refuse a non-default value for a parameter whose subsystem does not exist yet."""
    for name, default in UNAVAILABLE.items():
        value = values.get(name, default)
        if value is default or value == default:
            continue
        if name == "auto_discover_skills" and value is False:
            continue  # turning discovery off is what 0.1 does anyway
        raise ConfigurationError(
            "LA-CONFIG",
            f"LightAgent({name}=...) is not available in lightagent-core 0.1",
            hint=_HINTS.get(
                name,
                f"Leave {name} at its default ({default!r}); this subsystem ships in a later version or a plugin.",
            ),
            details={"parameter": name},
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
    """A ``Model`` object for the agent's ``model=`` (a name, or an object following ``Model``)."""
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
        return factory  # a ready Model instance was registered
    offered = {"model": name, "api_key": api_key, "base_url": base_url, "client": client}
    kwargs = _accepted(factory, {k: v for k, v in offered.items() if v is not None})
    try:
        return factory(**kwargs)
    except LightAgentError:
        raise
    except TypeError as exc:
        raise ConfigurationError(
            "LA-CONFIG",
            f"the model provider {provider or 'openai'!r} could not be built with {sorted(kwargs)}: {exc}",
            hint="A model provider is a Model instance, or a class/factory taking keyword "
            "arguments among model=, api_key=, base_url= (docs/agent.md).",
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
    """A tool for the agent: names are looked up among the plugins' tool providers."""
    if not isinstance(obj, str):
        return obj
    registry = _registry()
    if registry is None:
        raise ConfigurationError("LA-CONFIG", f"tool name {obj!r} needs the plugin registry")
    try:
        return registry.get("tool", obj).load()
    except PluginError as exc:
        raise ConfigurationError(
            "LA-CONFIG",
            f"no tool named {obj!r} is registered",
            hint="Pass the function itself, or install the plugin that registers it (`lightagent plugins`).",
            details={"tool": obj},
        ) from exc


def resolve_store(store: Any) -> Any:
    """A session store instance for ``session_store=`` (an instance, or a registered name)."""
    if not isinstance(store, str):
        return store
    registry = _registry()
    if registry is None:
        raise ConfigurationError("LA-CONFIG", f"session_store={store!r} needs the plugin registry")
    try:
        provider = registry.get("session_store", store).load()
    except PluginError as exc:
        raise ConfigurationError(
            "LA-CONFIG",
            f"no session store named {store!r} is registered",
            hint="Pass a SessionStore instance, or one of the names `lightagent plugins` lists.",
        ) from exc
    return provider() if isinstance(provider, type) else provider
