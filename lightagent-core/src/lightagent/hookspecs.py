"""The plugin contract: pluggy hookspecs of project ``lightagent``.

Every ``register_*`` hook hands the plugin a ``register`` callback:
``register(name, provider, *, priority=0, scope="runtime")``. ``provider`` is the
object itself, a factory, or a lazy ``"module:attribute"`` string that is imported only
when the provider is first resolved. Hooks only register; the registered objects do the
work. Hookspecs change additively: an implementation receives only the arguments it
declares, so adding one never breaks a plugin.
"""

from __future__ import annotations

from typing import Any, Protocol

import pluggy

__all__ = ["PROJECT", "REGISTER_HOOKS", "Register", "hookimpl", "hookspec"]

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


@hookspec
def register_tools(register: Register) -> None:
    """Register tools (``@tool`` functions, seeds-style ``tool_info`` callables) or tool providers."""


@hookspec
def register_memory(register: Register) -> None:
    """Register memory backends following ``MemoryProtocol`` (``store`` and ``retrieve``)."""


@hookspec
def register_session_stores(register: Register) -> None:
    """Register session event stores following ``SessionStore``."""


@hookspec
def register_retrieval(register: Register) -> None:
    """Register retrieval providers (``ingest``, ``search``, ``read_chunk`` …)."""


@hookspec
def register_workflows(register: Register) -> None:
    """Register workflow engines (LightFlow, LightDAG, your own)."""


@hookspec
def register_verifiers(register: Register) -> None:
    """Register LightDAG verifiers (``key``, ``version``, ``async verify(request)``)."""


@hookspec
def register_artifact_stores(register: Register) -> None:
    """Register artifact stores (``stage``, ``read``, ``publish``)."""


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
def register_commands(cli: Any) -> None:
    """Add subcommands to the ``lightagent`` command: ``cli.add_command(name, handler, ...)``."""


@hookspec
def lightagent_manifest() -> Any:
    """Return this plugin's ``ConnectorManifest`` (or a dict of its fields) for validation and listing."""


#: Provider kind -> the hook that registers it. The registry's kinds follow this table.
REGISTER_HOOKS: dict[str, str] = {
    "model": "register_models",
    "tool": "register_tools",
    "memory": "register_memory",
    "session_store": "register_session_stores",
    "retrieval": "register_retrieval",
    "workflow": "register_workflows",
    "verifier": "register_verifiers",
    "artifact_store": "register_artifact_stores",
    "guardrail": "register_guardrails",
    "hook": "register_hooks",
    "exporter": "register_exporters",
}
