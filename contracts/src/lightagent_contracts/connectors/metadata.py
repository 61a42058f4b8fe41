"""Checks on packaging metadata: entry points, the core requirement, extras, README."""

from __future__ import annotations

from collections.abc import Iterable

from lightagent_contracts.connectors.findings import Finding
from lightagent_contracts.connectors.project import ProjectInfo

__all__ = ["check_extras", "check_metadata"]


def check_metadata(info: ProjectInfo, core_version: str) -> list[Finding]:
    """Entry points, the core requirement, extras and the README."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    out: list[Finding] = []
    where = str(info.root / "pyproject.toml") if info.root else f"distribution {info.name}"
    eps = info.entry_points
    if not eps:
        out.append(
            Finding.make(
                "LAV002",
                "no entry point in group `lightagent`",
                where,
                hint='Add [project.entry-points.lightagent] "<dist-name>" = "<package>.plugin".',
            )
        )
    elif len(eps) > 1 or (
        info.name and canonicalize_name(eps[0].name) != canonicalize_name(info.name)
    ):
        names = ", ".join(ep.name for ep in eps)
        out.append(
            Finding.make(
                "LAV003",
                f"expected one entry point named {info.name!r}, found: {names}",
                where,
                hint="pluggy skips a second plugin reusing a name; name the entry point after the distribution.",
            )
        )
    core_reqs = []
    for text in info.requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            out.append(Finding.make("LAV090", f"invalid requirement {text!r}", where))
            continue
        if canonicalize_name(req.name) == "lightagent-core":
            core_reqs.append(req)
    if not core_reqs and canonicalize_name(info.name or "") != "lightagent-core":
        out.append(
            Finding.make(
                "LAV004",
                "no requirement on lightagent-core",
                where,
                hint=f'Add "lightagent-core>={_minor(core_version)},<{_next_minor(core_version)}" to dependencies.',
            )
        )
    for req in core_reqs:
        if not req.specifier.contains(core_version, prereleases=True):
            out.append(
                Finding.make(
                    "LAV005",
                    f"requires lightagent-core{req.specifier}, which excludes the running {core_version}",
                    where,
                    hint="Widen the range or install a core version it admits.",
                )
            )
    out.extend(check_extras(info, where))
    if not info.readme.strip():
        out.append(
            Finding.make(
                "LAV095", "no README (long description)", where, hint='Set readme = "README.md".'
            )
        )
    return out


def check_extras(info: ProjectInfo, where: str, declared: Iterable[str] = ()) -> list[Finding]:
    """Extras' requirement strings parse and agree with installed versions (offline)."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement

    out: list[Finding] = []
    for extra, reqs in info.extras.items():
        for text in reqs:
            try:
                req = Requirement(text)
            except InvalidRequirement as exc:
                out.append(Finding.make("LAV090", f"extra {extra!r}: {exc}", where))
                continue
            try:
                installed = metadata.version(req.name)
            except metadata.PackageNotFoundError:
                out.append(
                    Finding.make("LAV093", f"extra {extra!r}: {req.name} is not installed", where)
                )
                continue
            if req.specifier and not req.specifier.contains(installed, prereleases=True):
                out.append(
                    Finding.make(
                        "LAV091",
                        f"extra {extra!r} requires {req}, but {req.name} {installed} is installed",
                        where,
                    )
                )
    for extra in declared:
        if extra not in info.extras:
            out.append(
                Finding.make(
                    "LAV092",
                    f"the manifest names extra {extra!r}, which the distribution does not declare",
                    where,
                )
            )
    return out


def _minor(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else version


def _next_minor(version: str) -> str:
    parts = version.split(".")
    try:
        return f"{parts[0]}.{int(parts[1]) + 1}"
    except (IndexError, ValueError):
        return version
