"""The lightagent plugin of lightagent-devtools: the ``trace`` command.

The handler imports the trace page only when the command runs, so loading this plugin
(``lightagent --help``, ``lightagent plugins``) stays cheap.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl

__all__ = ["lightagent_manifest", "register_commands"]


@hookimpl
def register_commands(cli: Any) -> None:
    """``lightagent trace view SESSION_OR_RUN --store URL --output F.html``."""

    def configure(parser: Any) -> None:
        from lightagent_devtools.trace_page import configure_trace

        configure_trace(parser)

    def handler(args: Any) -> int:
        from lightagent_devtools.trace_page import run_trace

        return run_trace(args)

    cli.add_command(
        "trace",
        handler,
        help="write a run's trace page: `trace view SESSION_OR_RUN --store URL --output F.html`",
        configure=configure,
    )


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_devtools import __version__

    return {
        "name": "lightagent-devtools",
        "version": __version__,
        "description": "Evaluation (LightEvaluator) and the offline trace page for lightagent.",
        "docs": "docs/evaluation.md",
    }
