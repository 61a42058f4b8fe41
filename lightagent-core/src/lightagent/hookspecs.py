"""The plugin contract: pluggy hookspecs of project ``lightagent``, kernel concepts only.

Every ``register_*`` hook hands the plugin a ``register`` callback:
``register(name, provider, *, priority=0, scope="runtime")``. ``provider`` is the
object itself, a factory, or a lazy ``"module:attribute"`` string that is imported only
when the provider is first resolved. Hooks only register; the registered objects do the
work. Hookspecs change additively: an implementation receives only the arguments it
declares, so adding one never breaks a plugin.

A plugin adds hooks of its own with :func:`register_hookspecs` (as pytest plugins do with
``pytest_addhooks``): LightFlow and LightDAG own ``register_workflows``,
``register_verifiers`` and ``register_artifact_stores`` that way.
"""

from __future__ import annotations

from typing import Any, Protocol

import pluggy

__all__ = [
    "LEGACY_HOOKS",
    "PROJECT",
    "REGISTER_HOOKS",
    "AddHookspecs",
    "Register",
    "hookimpl",
    "hookspec",
]

PROJECT = "lightagent"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class Register(Protocol):
    """The callback a ``register_*`` hook receives."""

    def __call__(
        self, name: str, provider: Any, *, priority: int = 0, scope: str = "runtime"
    ) -> None: ...


@hookspec
def register_models(register: Register) -> None:
    """Register model providers (objects following :class:`lightagent.models.base.Model`, or factories)."""


class AddHookspecs(Protocol):
    """The callback :func:`register_hookspecs` receives."""

    def __call__(self, specs: Any, *, kinds: dict[str, str] | None = None) -> None: ...


@hookspec
def register_hookspecs(add: AddHookspecs) -> None:
    """Add this plugin's own hookspecs: ``add(module_or_class, kinds={"widget": "register_widgets"})``.

    ``specs`` holds functions decorated with ``lightagent.hookspec``; ``kinds`` maps a
    registry kind to each ``register_*`` hook among them, so what other plugins register
    through it lands in the registry. Two plugins may declare the same hook if both
    declare it with the same arguments.
    """


@hookspec
def register_tools(register: Register) -> None:
    """Register tools (``@tool`` functions, seeds-style ``tool_info`` callables) or tool providers."""


@hookspec
def register_toolsets(register: Register) -> None:
    """Register toolsets or toolset factories (``list_tools``, ``call_tool``, an async lifecycle).

    A factory is called with the user's configuration: ``tools=[("name", {...})]``.
    """


@hookspec
def register_memory(register: Register) -> None:
    """Register memory backends following ``MemoryProtocol`` (``store`` and ``retrieve``), or factories taking configuration."""


@hookspec
def register_session_stores(register: Register) -> None:
    """Register session event stores following ``SessionStore``."""


@hookspec
def register_retrieval(register: Register) -> None:
    """Register retrieval providers (``search(query, *, limit=5, **filters)``, ``ingest`` …), or factories."""


@hookspec
def register_guardrails(register: Register) -> None:
    """Register guardrails or guardrail factories (input, tool and output)."""


@hookspec
def register_hooks(register: Register) -> None:
    """Register runtime hooks (callables or objects with per-phase methods)."""


@hookspec
def register_exporters(register: Register) -> None:
    """Register trace and event exporters (``export(events, summary, metadata)``)."""


@hookspec
def register_agent_extensions(register: Register) -> None:
    """Register :class:`lightagent.extensions.AgentExtension` objects: a capability's
    ``LightAgent`` keywords, run options and agent attributes, and what it adds to each run."""


@hookspec
def register_tool_selectors(register: Register) -> None:
    """Register :class:`lightagent.tools.selector.ToolSelector` objects: which of an agent's
    many tools the loop offers each model request (the highest priority one is used)."""


@hookspec
def register_commands(cli: Any) -> None:
    """Add subcommands to the ``lightagent`` command: ``cli.add_command(name, handler, ...)``."""


@hookspec
def lightagent_manifest() -> Any:
    """Return this plugin's ``ConnectorManifest`` (or a dict of its fields) for validation and listing."""


#: Provider kind -> the kernel hook that registers it. Plugins add kinds with their own hooks.
REGISTER_HOOKS: dict[str, str] = {
    "model": "register_models",
    "tool": "register_tools",
    "toolset": "register_toolsets",
    "memory": "register_memory",
    "session_store": "register_session_stores",
    "retrieval": "register_retrieval",
    "guardrail": "register_guardrails",
    "hook": "register_hooks",
    "exporter": "register_exporters",
    "agent_extension": "register_agent_extensions",
    "tool_selector": "register_tool_selectors",
}

#: Hooks that moved out of the kernel in 0.2: hook -> (registry kind, distributions that own
#: it now). They keep working until lightagent-core 0.3, with a ``DeprecationWarning``.
LEGACY_HOOKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "register_workflows": ("workflow", ("lightagent-flow", "lightagent-dag")),
    "register_verifiers": ("verifier", ("lightagent-dag",)),
    "register_artifact_stores": ("artifact_store", ("lightagent-dag",)),
}
