"""The hook implementations of lightagent-plugin-hello.

It registers one tool (``hello``) and one command (``lightagent hello``). Everything here
is cheap to import: hooks only register, the registered objects do the work.
"""

from __future__ import annotations

import argparse
from typing import Any

from lightagent import ConnectorManifest, hookimpl, tool

from lightagent_plugin_hello import __version__


@tool
def hello(name: str = "world") -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", default="world", help="who to greet")


def _run(args: argparse.Namespace) -> int:
    print(hello.func(name=args.name))
    return 0


@hookimpl
def register_tools(register: Any) -> None:
    """Register the ``hello`` tool."""
    register("hello", hello)


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``lightagent hello [NAME]``."""
    cli.add_command("hello", _run, help="print a greeting", configure=_configure)


@hookimpl
def lightagent_manifest() -> ConnectorManifest:
    """What this plugin brings."""
    return ConnectorManifest(
        name="lightagent-plugin-hello",
        version=__version__,
        description="A `hello` tool and a `lightagent hello` command.",
        tools=("hello",),
        commands=("hello",),
        core_requires=">=0.1.0,<0.2",
    )
