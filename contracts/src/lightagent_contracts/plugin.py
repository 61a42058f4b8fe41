"""lightagent-contracts as a lightagent plugin: the plugin author's commands.

``lightagent validate-connector`` and ``lightagent new-plugin`` come from here; the
kernel names this distribution when one of them is asked for without it installed.
Nothing is registered for agent runs.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl

__all__ = ["lightagent_manifest", "register_commands"]


@hookimpl
def register_commands(cli: Any) -> None:
    """``validate-connector`` and ``new-plugin``, imported only when run."""

    def lazy(name: str) -> Any:
        def call(*args: Any) -> Any:
            from lightagent_contracts.connectors import cli as commands

            return getattr(commands, name)(*args)

        return call

    cli.add_command(
        "validate-connector",
        lazy("run_validate"),
        help="check a plugin offline: entry point, imports, hooks, tools, credentials",
        configure=lazy("configure_validate"),
    )
    cli.add_command(
        "new-plugin",
        lazy("run_new_plugin"),
        help="write a ready-to-publish plugin skeleton",
        configure=lazy("configure_new_plugin"),
    )


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """This distribution's manifest."""
    from importlib.metadata import version

    return {
        "name": "lightagent-contracts",
        "version": version("lightagent-contracts"),
        "description": "The plugin author's kit: contract suites, the loopback server, "
        "validate-connector and new-plugin.",
    }
