"""The lightagent plugin of lightagent-dag: its hook implementations.

Everything is registered lazily (``"module:attribute"`` strings and a command whose
handler imports the CLI module on use), so loading this plugin imports nothing heavy.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import Register, hookimpl

__all__ = [
    "lightagent_manifest",
    "register_artifact_stores",
    "register_commands",
    "register_hookspecs",
    "register_workflows",
]


@hookimpl
def register_hookspecs(add: Any) -> None:
    """Declare the hooks LightDAG owns: workflows, verifiers, artifact stores."""
    from lightagent_dag import hookspecs

    add(hookspecs, kinds=hookspecs.KINDS)


@hookimpl
def register_workflows(register: Register) -> None:
    """LightDAG as the workflow engine ``lightdag``."""
    register("lightdag", "lightagent_dag:LightDAG")


@hookimpl
def register_artifact_stores(register: Register) -> None:
    """The local content-addressed artifact store as ``local``."""
    register("local", "lightagent_dag:LocalArtifactStore")


@hookimpl
def register_commands(cli: Any) -> None:
    """``lightagent dag worker|status``."""

    def configure(parser: Any) -> None:
        from lightagent_dag.cli import configure_dag

        configure_dag(parser)

    def handler(args: Any) -> int:
        from lightagent_dag.cli import run_dag

        return run_dag(args)

    cli.add_command(
        "dag",
        handler,
        help="LightDAG: run worker processes against a shared store, show a run's status",
        configure=configure,
    )


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_dag import __version__

    return {
        "name": "lightagent-dag",
        "version": __version__,
        "description": "LightDAG: verified dynamic task graphs with leases and fencing, on one machine or many.",
        "docs": "docs/dag.md",
    }
