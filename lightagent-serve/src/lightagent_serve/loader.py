"""``module:attr`` to the agents to serve: an agent, a list or dict of agents, or a factory."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lightagent.errors import ConfigurationError

__all__ = ["load_agents"]


def _is_agent(obj: Any) -> bool:
    return callable(getattr(obj, "arun", None)) and callable(getattr(obj, "astream", None))


def _import(spec: str, app_dir: str | None) -> Any:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(
            "LA-CONFIG",
            f"APP must be 'module:attribute', got {spec!r}",
            hint="For example: lightagent serve myapp.agents:support_agent",
        )
    if app_dir is not None:
        path = str(Path(app_dir).resolve())
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            "LA-CONFIG",
            f"cannot import module {module_name!r}: {exc}",
            hint="Run from the folder that holds it, or pass --app-dir.",
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigurationError(
                "LA-CONFIG", f"module {module_name!r} has no attribute {attr!r}"
            ) from None
    return obj


def load_agents(app: Any, *, app_dir: str | None = ".") -> dict[str, Any]:
    """The agents to serve, by model name.

    ``app`` is ``"module:attr"`` or the object itself: an agent (served under its
    ``name``), a list of agents, a dict ``{model name: agent}``, or a callable taking no
    argument that returns one of those (a factory). Names must be unique.
    """
    obj = _import(app, app_dir) if isinstance(app, str) else app
    if callable(obj) and not _is_agent(obj) and not isinstance(obj, (Mapping, list, tuple)):
        obj = obj()
    if _is_agent(obj):
        pairs = [(getattr(obj, "name", None), obj)]
    elif isinstance(obj, Mapping):
        pairs = list(obj.items())
    elif isinstance(obj, (list, tuple)):
        pairs = [(getattr(a, "name", None), a) for a in obj]
    else:
        raise ConfigurationError(
            "LA-CONFIG",
            f"APP is a {type(obj).__name__}, not an agent, a list or dict of agents, or a factory",
        )
    agents: dict[str, Any] = {}
    for name, agent in pairs:
        if not _is_agent(agent):
            raise ConfigurationError(
                "LA-CONFIG", f"{name!r} is a {type(agent).__name__}, not an agent (no arun/astream)"
            )
        if not isinstance(name, str) or not name:
            raise ConfigurationError("LA-CONFIG", f"agent {agent!r} has no name to serve it under")
        if name in agents:
            raise ConfigurationError(
                "LA-CONFIG",
                f"two agents are named {name!r}",
                hint="Give each agent its own name=, or serve a dict {model name: agent}.",
            )
        agents[name] = agent
    if not agents:
        raise ConfigurationError("LA-CONFIG", "APP holds no agent to serve")
    return agents
