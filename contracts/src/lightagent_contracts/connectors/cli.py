"""The ``validate-connector`` and ``new-plugin`` commands (registered by ``lightagent_contracts.plugin``)."""

from __future__ import annotations

import argparse
import sys

__all__ = ["configure_new_plugin", "configure_validate", "run_new_plugin", "run_validate"]


def configure_validate(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``lightagent validate-connector``."""
    from lightagent_contracts.connectors.validate import (
        DEFAULT_IMPORT_BUDGET,
        DEFAULT_MEMORY_BUDGET_MB,
        DEFAULT_TIMEOUT,
    )

    parser.add_argument(
        "target",
        metavar="PATH|DISTRIBUTION",
        help="a project directory or an installed distribution",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"stop the sandboxed import after this many seconds (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--import-budget",
        type=float,
        default=DEFAULT_IMPORT_BUDGET,
        help=f"fail an import slower than this many seconds (default {DEFAULT_IMPORT_BUDGET:g})",
    )
    parser.add_argument(
        "--memory-budget",
        type=float,
        default=DEFAULT_MEMORY_BUDGET_MB,
        help=f"fail an import that grows the process by more MB (default {DEFAULT_MEMORY_BUDGET_MB})",
    )
    parser.add_argument(
        "--static-only", action="store_true", help="skip the sandboxed import; run no plugin code"
    )


def run_validate(args: argparse.Namespace) -> int:
    """Validate and print the report; exit 0 when it passes, 1 when it fails."""
    from lightagent_contracts.connectors.validate import validate_connector

    report = validate_connector(
        args.target,
        timeout=args.timeout,
        import_budget=args.import_budget,
        memory_budget_mb=args.memory_budget,
        sandbox=not args.static_only,
    )
    print(report.to_json() if args.json else report.format_text())
    return 0 if report.passed else 1


def configure_new_plugin(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``lightagent new-plugin``."""
    parser.add_argument(
        "name", metavar="NAME", help="plugin name, e.g. weather (gives lightagent-weather)"
    )
    parser.add_argument(
        "--dir", default=".", help="where to create the project folder (default: .)"
    )
    parser.add_argument(
        "--force", action="store_true", help="write into an existing, non-empty folder"
    )


def run_new_plugin(args: argparse.Namespace) -> int:
    """Write the plugin skeleton and print where it went; 2 on bad input."""
    from lightagent.errors import LightAgentError

    from lightagent_contracts.connectors.scaffold import new_plugin

    try:
        project = new_plugin(args.name, directory=args.dir, force=args.force)
    except LightAgentError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print(f"created {project}")
    print(f"next: pip install -e {project} && lightagent validate-connector {project}")
    return 0
