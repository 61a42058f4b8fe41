"""The lightagent plugin of lightagent-serve: the ``serve`` command.

The handler imports Starlette and uvicorn only when the command runs, so loading this
plugin (``lightagent --help``, ``lightagent plugins``) stays cheap.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl

__all__ = ["lightagent_manifest", "register_commands"]


@hookimpl
def register_commands(cli: Any) -> None:
    """``lightagent serve APP``."""

    def configure(parser: Any) -> None:
        from lightagent_serve.cli import configure_serve

        configure_serve(parser)

    def handler(args: Any) -> int:
        from lightagent_serve.cli import run_serve

        return run_serve(args)

    cli.add_command(
        "serve",
        handler,
        help="serve agents behind the OpenAI Chat Completions API (Starlette + uvicorn)",
        configure=configure,
    )


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    """What ``lightagent plugins`` shows for this distribution."""
    from lightagent_serve import __version__

    return {
        "name": "lightagent-serve",
        "version": __version__,
        "description": "lightagent agents behind the OpenAI Chat Completions API.",
        "docs": "docs/serve.md",
    }
