"""The ``lightagent`` command. Subcommands come from plugins through ``register_commands(cli)``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lightagent._version import __version__

__all__ = ["ELSEWHERE", "CommandSet", "main"]

Handler = Callable[[argparse.Namespace], int | None]
Configure = Callable[[argparse.ArgumentParser], None]


@dataclass
class _Command:
    name: str
    handler: Handler
    help: str
    configure: Configure | None
    plugin: str


class CommandSet:
    """What ``register_commands(cli)`` receives: call :meth:`add_command` to add a subcommand."""

    def __init__(self) -> None:
        self.commands: dict[str, _Command] = {}
        self.plugin = "lightagent-core"

    def add_command(
        self,
        name: str,
        handler: Handler,
        *,
        help: str = "",
        configure: Configure | None = None,
    ) -> None:
        """Add ``lightagent NAME``; ``configure(parser)`` adds arguments, ``handler(args)`` returns the exit code."""
        from lightagent.errors import PluginError

        if name in self.commands:
            other = self.commands[name].plugin
            raise PluginError(
                "LA-PLUGIN-CONFLICT",
                f"command {name!r} is registered by both {other!r} and {self.plugin!r}",
            )
        self.commands[name] = _Command(name, handler, help, configure, self.plugin)


def _collect(host: Any) -> CommandSet:
    cli = CommandSet()
    for info in host.plugins():
        if info.status != "loaded":
            continue
        cli.plugin = info.name
        before = dict(cli.commands)
        try:
            host._call_impl(info.name, "register_commands", cli=cli)
        except Exception as exc:
            cli.commands = before  # drop this plugin's half-registered commands
            host.record_failure(info.name, exc)
    return cli


#: Commands that other distributions register: name -> (distribution, extra of lightagent-core).
#: Asking for one without its distribution is LA-MISSING-EXTRA naming the install line.
ELSEWHERE: dict[str, tuple[str, str]] = {
    "validate-connector": ("lightagent-contracts", "contracts"),
    "new-plugin": ("lightagent-contracts", "contracts"),
    "trace": ("lightagent-devtools", "devtools"),
}

# Commands that diagnose plugins load them leniently even under LIGHTAGENT_STRICT_PLUGINS:
# strict mode would otherwise stop the one command its error message points to.
_LENIENT_COMMANDS = frozenset({"plugins"})
_STRICT_ENV = "LIGHTAGENT_STRICT_PLUGINS"


def _lenient_host() -> Any:
    from lightagent.plugins import PluginHost

    return PluginHost(environ={k: v for k, v in os.environ.items() if k != _STRICT_ENV})


def _plugins_command(args: argparse.Namespace) -> int:
    from lightagent.plugins import get_host

    host = getattr(args, "_host", None) or get_host()
    infos = [i for i in host.plugins() if args.all or not i.builtin]
    # Under strict mode the listing still prints in full; the exit code says whether it passed.
    broken = [i.name for i in host.plugins() if i.status in ("failed", "blocked")]
    failed = 1 if broken and get_host().strict else 0
    if failed:
        listed = ",".join(broken)
        print(
            f"lightagent plugins: {_STRICT_ENV} is set and these failed: {listed}. Every other "
            "command, and the first use of the plugin registry, stops with LA-PLUGIN until they "
            f"load: fix or upgrade them, or skip them with LIGHTAGENT_DISABLE_PLUGINS={listed}.",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps([i.to_dict() for i in infos], indent=2))
        return failed
    if not infos:
        print(
            "No plugins installed. `pip install lightagent-core[flow,dag]` adds the first-party ones."
        )
        return failed
    for info in infos:
        version = f" {info.version}" if info.version else ""
        print(f"{info.name}{version}  [{info.status}]")
        if info.distribution and info.distribution != info.name:
            print(f"  distribution: {info.distribution}")
        for kind, names in info.registered.items():
            print(f"  {kind}: {', '.join(names)}")
        if info.hookspecs:
            print(f"  declares hooks: {', '.join(info.hookspecs)}")
        for warning in info.warnings:
            print(f"  deprecated: {warning}")
        if info.error:
            print(f"  error: {info.error}")
    return failed


def _configure_plugins(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--all", action="store_true", help="include the core's built-in plugin")


def _version_command(args: argparse.Namespace) -> int:
    print(f"lightagent-core {__version__}")
    return 0


def build_parser(
    host: Any | None = None, argv: Sequence[str] | None = None
) -> tuple[argparse.ArgumentParser, CommandSet]:
    """The argument parser with every built-in and plugin subcommand.

    Only the subcommand named in ``argv`` is configured, so one plugin's slow or broken
    ``configure`` never touches another command.
    """
    from lightagent.plugins import get_host

    host = host or get_host()
    parser = argparse.ArgumentParser(prog="lightagent", description="lightagent command line")
    parser.add_argument("--version", action="version", version=f"lightagent-core {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = _collect(host)
    commands.plugin = "lightagent-core"
    builtins = {
        "plugins": _Command(
            "plugins",
            _plugins_command,
            "list installed plugins",
            _configure_plugins,
            "lightagent-core",
        ),
        "version": _Command(
            "version", _version_command, "print the core version", None, "lightagent-core"
        ),
    }
    chosen = next((a for a in (argv or ()) if not a.startswith("-")), None)
    for command in {**commands.commands, **builtins}.values():
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        handler = _guarded(command)
        if command.configure is not None and command.name == chosen:
            try:
                command.configure(child)
            except Exception as exc:
                handler = _broken(command, exc)
        child.set_defaults(_handler=handler, _host=host)
    return parser, commands


def _guarded(command: _Command) -> Handler:
    def run(args: argparse.Namespace) -> int:
        from lightagent.errors import LightAgentError

        try:
            return int(command.handler(args) or 0)
        except (LightAgentError, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as exc:
            print(
                f"lightagent {command.name}: failed in plugin {command.plugin!r}: "
                f"{type(exc).__name__}: {exc}",
                file=sys.stderr,
            )
            return 1

    return run


def _broken(command: _Command, exc: BaseException) -> Handler:
    def run(args: argparse.Namespace) -> int:
        print(
            f"lightagent {command.name}: unavailable, plugin {command.plugin!r} failed: "
            f"{type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return 1

    return run


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lightagent`` command."""
    from lightagent.errors import LightAgentError

    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        chosen = next((a for a in argv if not a.startswith("-")), None)
        host = _lenient_host() if chosen in _LENIENT_COMMANDS else None
        parser, commands = build_parser(host, argv=argv)
        if chosen in ELSEWHERE and chosen not in commands.commands:
            from lightagent.extras import missing_extra

            raise missing_extra(f"`lightagent {chosen}`", *ELSEWHERE[chosen])
        args = parser.parse_args(argv)
        handler = getattr(args, "_handler", None)
        if handler is None:
            parser.print_help()
            return 0
        code = int(handler(args) or 0)
        sys.stdout.flush()  # a reader that left early shows here, not at interpreter exit
        return code
    except LightAgentError as exc:
        print(f"lightagent: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_left()


def _reader_left() -> int:
    """``lightagent … | head``: end quietly with the status of a tool stopped by SIGPIPE."""
    # What is still buffered goes nowhere, so the flush at exit cannot fail again (the
    # suppress: stdout is no file descriptor when main() runs in-process, under capture).
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 + 13  # 13 is SIGPIPE (signal.SIGPIPE does not exist on Windows)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
