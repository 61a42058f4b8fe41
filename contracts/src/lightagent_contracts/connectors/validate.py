"""``validate_connector``: the offline plugin validator behind ``lightagent validate-connector``.

Static checks (metadata, an AST scan, credentials, MCP shape, extras, docs) read files
only. The dynamic checks import the plugin in a sandboxed subprocess (network, file writes
and process starts refused; a time limit) and check its hookimpls and registrations.
"""

from __future__ import annotations

import os
from pathlib import Path

from lightagent.manifest import ConnectorManifest

from lightagent_contracts.connectors.credentials import check_credentials_in_mapping
from lightagent_contracts.connectors.findings import FINDING_CODES, Finding, Level, ValidationReport
from lightagent_contracts.connectors.inline import check_inline_tools
from lightagent_contracts.connectors.mcp_settings import check_mcp_servers
from lightagent_contracts.connectors.metadata import check_extras, check_metadata
from lightagent_contracts.connectors.project import ProjectInfo, load_project
from lightagent_contracts.connectors.sandbox import SandboxResult, run_sandboxed
from lightagent_contracts.connectors.static import check_hookimpls_static, scan_sources

__all__ = ["FINDING_CODES", "Finding", "Level", "ValidationReport", "validate_connector"]

DEFAULT_TIMEOUT = 20.0
DEFAULT_IMPORT_BUDGET = 3.0
DEFAULT_MEMORY_BUDGET_MB = 256


def validate_connector(
    target: str | Path | ConnectorManifest,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    import_budget: float = DEFAULT_IMPORT_BUDGET,
    memory_budget_mb: float = DEFAULT_MEMORY_BUDGET_MB,
    sandbox: bool = True,
    base_path: str | Path | None = None,
) -> ValidationReport:
    """Validate a plugin offline and return every finding.

    ``target`` is a project directory (with ``pyproject.toml``), the name of an installed
    distribution, or a bare :class:`ConnectorManifest` (then only the manifest is checked).
    ``timeout`` bounds the sandboxed import (it is stopped and ``LAV023`` reported);
    an import slower than ``import_budget`` seconds is ``LAV024``; one that grows the
    process by more than ``memory_budget_mb`` is ``LAV025``. ``sandbox=False`` runs the
    static checks only (no plugin code at all). ``base_path`` (the seeds' keyword) is the
    folder a bare manifest's docs and skills are looked up in.
    """
    from lightagent import __version__ as core_version
    from lightagent.errors import ConfigurationError

    for label, value in (
        ("timeout", timeout),
        ("import_budget", import_budget),
        ("memory_budget_mb", memory_budget_mb),
    ):
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigurationError(
                "LA-CONFIG",
                f"validate_connector: {label} must be a positive number, not {value!r}",
                hint="Pass seconds (timeout, import_budget) or megabytes (memory_budget_mb) above zero.",
            )
    if not isinstance(target, str | Path | ConnectorManifest):
        raise ConfigurationError(
            "LA-CONFIG",
            f"validate_connector: target must be a path, a distribution name or a ConnectorManifest, not {type(target).__name__}",
        )
    if isinstance(target, ConnectorManifest):
        report = ValidationReport(
            target=target.name, distribution=target.name, version=target.version
        )
        report.manifest = target.to_dict()
        root = Path(base_path) if base_path is not None else None
        info = ProjectInfo(target=target.name, kind="manifest", root=root)
        _check_manifest(report, info, target.to_dict(), core_version)
        report.findings.extend(check_inline_tools(target.components, root))
        for problem in target.component_problems:
            report.add(
                "LAV015",
                f"{problem['field']} {problem['component']!r}: {problem['message']}",
                "ConnectorManifest",
            )
        return report
    info, findings = load_project(target)
    report = ValidationReport(target=str(target), distribution=info.name, version=info.version)
    report.findings.extend(findings)
    if findings and info.name is None:
        return report
    report.findings.extend(check_metadata(info, core_version))
    report.findings.extend(scan_sources(info.package_dirs, _display_root(info)))
    if info.entry_points and not info.package_dirs:
        report.add(
            "LAV007", f"cannot find the module of entry point {info.entry_points[0].value!r}"
        )
    inspected = False
    if sandbox and info.entry_points:
        result = run_sandboxed(info, timeout=timeout)
        _apply_sandbox(report, info, result, timeout, import_budget, memory_budget_mb, core_version)
        inspected = bool(result.data and result.data.get("plugins"))
    if not inspected:
        # The plugin was not loaded (static-only, or its import failed): check hookimpls from source.
        report.findings.extend(check_hookimpls_static(info.package_dirs, _display_root(info)))
    report.findings[:] = list(dict.fromkeys(report.findings))
    return report


def _apply_sandbox(
    report: ValidationReport,
    info: ProjectInfo,
    result: SandboxResult,
    timeout: float,
    import_budget: float,
    memory_budget_mb: float,
    core_version: str,
) -> None:
    def rel(location: str) -> str:
        # Sandbox locations are absolute; show them like the static ones.
        base = _display_root(info)
        if base and location.startswith(str(base) + os.sep):
            return location[len(str(base)) + 1 :]
        return location

    codes = {"network": "LAV021", "write": "LAV022", "process": "LAV026"}
    for event in result.events:
        report.add(
            codes.get(event["kind"], "LAV028"),
            f"{event['kind']} refused: {event['detail']}",
            rel(event.get("where", "")),
        )
    if result.timed_out:
        report.import_seconds = result.elapsed
        report.add(
            "LAV023",
            f"the import ran {result.elapsed:.1f}s and was stopped at the {timeout:g}s limit",
        )
        return
    if result.data is None:
        report.add(
            "LAV028",
            f"the sandbox exited with status {result.returncode}: {result.stderr_tail.strip()[-300:]}",
        )
        return
    report.isolation = result.data.get("isolation")
    imports = result.data.get("imports", [])
    report.import_seconds = sum(r.get("seconds", 0.0) for r in imports)
    for record in imports:
        error = record.get("error")
        if (
            error
            and error["type"] != "SandboxViolation"
            and not (error["type"] == "PermissionError" and "sandbox" in error["message"])
        ):
            report.add(
                "LAV020",
                f"importing {record['module']} raised {error['type']}: {error['message']}",
                rel(error.get("where", "")),
            )
        elif error:
            report.add(
                "LAV020",
                f"importing {record['module']} failed: {error['message']}",
                rel(error.get("where", "")),
                level="info",
            )
        if record.get("seconds", 0.0) > import_budget:
            report.add(
                "LAV024",
                f"importing {record['module']} took {record['seconds']:.2f}s (budget {import_budget:g}s)",
            )
        rss_mb = record.get("rss_kb", 0) / 1024
        if rss_mb > memory_budget_mb:
            report.add(
                "LAV025",
                f"importing {record['module']} grew the process by {rss_mb:.0f} MB (budget {memory_budget_mb:g} MB)",
            )
        if record.get("heavy"):
            report.add("LAV027", f"importing {record['module']} loads {', '.join(record['heavy'])}")
    manifest = None
    host_failures = [
        (r["module"], r["host"])
        for r in imports
        if r.get("host") and r["host"]["status"] != "loaded"
    ]
    for plugin in result.data.get("plugins", []):
        for raw in plugin.get("findings", []):
            report.findings.append(
                Finding.make(
                    raw["code"],
                    raw["message"],
                    rel(raw.get("location", "")),
                    level=raw.get("level"),
                    hint=raw.get("hint", ""),
                )
            )
        for kind, names in plugin.get("registered", {}).items():
            report.registered.setdefault(kind, []).extend(names)
        if plugin.get("manifest") is not None:
            manifest = plugin["manifest"]
    explained = any(f.level == "error" and "LAV030" <= f.code <= "LAV059" for f in report.findings)
    if not explained:
        for module, host in host_failures:
            report.add("LAV035", f"{module}: {host['status']}: {host['error']}")
    if manifest is None and result.data.get("plugins"):
        # Only a plugin that loaded can be asked for its manifest; a failed import is its
        # own finding above and needs no "returns no manifest" after it.
        report.add(
            "LAV010",
            "the plugin returns no manifest",
        )
    elif manifest:
        report.manifest = manifest
        _check_manifest(report, info, manifest, core_version)


def _display_root(info: ProjectInfo) -> Path | None:
    # Paths are shown relative to the project, or for an installed distribution relative
    # to the folder holding its package (site-packages, or src/ of an editable install).
    if info.root:
        return info.root
    return info.package_dirs[0].resolve().parent if info.package_dirs else None


def _check_manifest(
    report: ValidationReport, info: ProjectInfo, manifest: dict, core_version: str
) -> None:
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name

    where = "lightagent_manifest()"
    if info.name and canonicalize_name(manifest["name"]) != canonicalize_name(info.name):
        report.add(
            "LAV012",
            f"manifest name {manifest['name']!r} differs from distribution {info.name!r}",
            where,
        )
    if info.version and manifest["version"] != info.version:
        report.add(
            "LAV012",
            f"manifest version {manifest['version']} differs from distribution {info.version}",
            where,
        )
    tools = list(manifest.get("tools", ()))
    for name in sorted({n for n in tools if tools.count(n) > 1}):
        report.add("LAV051", f"two tools in the manifest are named {name!r}", where)
    if not manifest.get("description", "").strip():
        report.add("LAV013", "the manifest has no description", where)
    core = manifest.get("core_requires")
    if core and not SpecifierSet(core).contains(core_version, prereleases=True):
        report.add(
            "LAV014",
            f"core_requires {core} excludes the running lightagent-core {core_version}",
            where,
        )
    if manifest.get("mcp_servers"):
        report.findings.extend(check_mcp_servers(manifest["mcp_servers"], f"{where}.mcp_servers"))
    else:
        report.findings.extend(check_credentials_in_mapping(manifest, where))
    if info.kind != "manifest":
        report.findings.extend(
            f for f in check_extras(info, where, manifest.get("extras", {})) if f.code == "LAV092"
        )
    # Docs paths are relative to the project (or, in a monorepo, to a folder above it).
    start = info.root or (info.package_dirs[0].parent if info.package_dirs else None)
    bases = [start, *list(start.parents)[:3]] if start else []
    search = [*bases, *info.package_dirs]
    for skill in manifest.get("skills", []):
        if not any((base / skill / "SKILL.md").is_file() for base in search):
            report.add(
                "LAV094",
                f"skill {skill!r}: no {skill}/SKILL.md in the project or package",
                where,
            )
    for doc in manifest.get("docs", []):
        if doc.startswith(("http://", "https://")):
            report.add("LAV097", f"{doc} (not fetched offline)", where)
        elif not any((base / doc).is_file() for base in bases):
            report.add("LAV096", f"documentation file {doc!r} does not exist", where)
    if info.kind == "manifest":
        return
    declared = ConnectorManifest.from_any(manifest).declared()
    declared.setdefault("command", tuple(manifest.get("commands", ())))
    for kind in sorted(set(declared) | set(report.registered)):
        want, have = set(declared.get(kind, ())), set(report.registered.get(kind, ()))
        for name in sorted(want - have):
            report.add("LAV042", f"{kind} {name!r} is declared but not registered", where)
        for name in sorted(have - want):
            report.add("LAV043", f"{kind} {name!r} is registered but not declared", where)
