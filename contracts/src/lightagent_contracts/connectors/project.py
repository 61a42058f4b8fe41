"""Reading a plugin's packaging metadata without running any of its code.

A target is a project directory (with ``pyproject.toml``) or the name of an installed
distribution. Either way the result is a :class:`ProjectInfo`.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

from lightagent_contracts.connectors.findings import Finding

__all__ = ["EntryPointInfo", "ProjectInfo", "load_project"]

GROUP = "lightagent"


@dataclass(frozen=True)
class EntryPointInfo:
    """One ``lightagent`` entry point: ``name = module[:attr]``."""

    name: str
    value: str

    @property
    def module(self) -> str:
        """The module part of the value."""
        return self.value.split(":", 1)[0].strip()


@dataclass
class ProjectInfo:
    """A plugin's metadata: identity, requirements, extras, entry points, sources and docs."""

    target: str
    kind: str  # "path" or "distribution"
    name: str | None = None
    version: str | None = None
    root: Path | None = None
    requires: list[str] = field(default_factory=list)
    extras: dict[str, list[str]] = field(default_factory=dict)
    entry_points: list[EntryPointInfo] = field(default_factory=list)
    readme: str = ""
    readme_path: Path | None = None
    package_dirs: list[Path] = field(default_factory=list)
    sys_path: list[str] = field(default_factory=list)  # extra import roots for the sandbox


def _read_toml(path: Path) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
    with path.open("rb") as fh:
        return tomllib.load(fh)


def _static_version(package_dir: Path) -> str | None:
    # A dynamic version is read from ``__version__ = "..."`` without importing anything.
    for candidate in ("_version.py", "__about__.py", "version.py", "__init__.py"):
        file = package_dir / candidate
        if not file.is_file():
            continue
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                return node.value.value
    return None


def _poetry_range(version: str) -> str:
    """PEP 440 specifiers for Poetry's ``^`` / ``~`` / ``*`` constraints."""
    if version in ("", "*"):
        return ""
    if version[0] not in "^~" or version.startswith("~="):
        return version if version[0] in "<>=!~" else f"=={version}"
    base = version.lstrip("^~")
    parts = [int(p) for p in base.split(".") if p.isdigit()] + [0, 0]
    major, minor, patch = parts[:3]
    if version[0] == "~":
        upper = f"{major}.{minor + 1}"
    elif major:
        upper = f"{major + 1}"
    elif minor:
        upper = f"0.{minor + 1}"
    else:
        upper = f"0.0.{patch + 1}"
    return f">={base},<{upper}"


def _from_poetry(poetry: dict) -> dict:
    # Poetry keeps metadata in [tool.poetry]; map what the validator reads onto PEP 621 keys.
    if not poetry:
        return {}

    def requirement(name: str, spec: object) -> str:
        version = str(spec.get("version", "") if isinstance(spec, dict) else spec).strip()
        return f"{name}{_poetry_range(version)}"

    deps = [
        requirement(n, v) for n, v in (poetry.get("dependencies") or {}).items() if n != "python"
    ]
    readme = poetry.get("readme")
    return {
        "name": poetry.get("name"),
        "version": poetry.get("version"),
        "dependencies": deps,
        "optional-dependencies": {k: list(v) for k, v in (poetry.get("extras") or {}).items()},
        "entry-points": poetry.get("plugins") or {},
        "readme": readme[0] if isinstance(readme, list) and readme else readme,
    }


def _load_path(root: Path, info: ProjectInfo, findings: list[Finding]) -> None:
    pyproject = root / "pyproject.toml"
    try:
        data = _read_toml(pyproject)
    except Exception as exc:
        findings.append(
            Finding.make("LAV006", f"cannot read pyproject.toml: {exc}", str(pyproject))
        )
        return
    project = data.get("project") or _from_poetry((data.get("tool") or {}).get("poetry") or {})
    if not project.get("name"):
        findings.append(
            Finding.make(
                "LAV006",
                "pyproject.toml has no [project] name",
                str(pyproject),
                hint="Declare the distribution in a PEP 621 [project] table.",
            )
        )
        return
    info.name = project.get("name")
    info.version = project.get("version")
    info.requires = [str(r) for r in project.get("dependencies") or []]
    info.extras = {
        k: [str(r) for r in v] for k, v in (project.get("optional-dependencies") or {}).items()
    }
    eps = (project.get("entry-points") or {}).get(GROUP) or {}
    info.entry_points = [EntryPointInfo(k, str(v)) for k, v in eps.items()]
    readme = project.get("readme")
    readme_file = readme.get("file") if isinstance(readme, dict) else readme
    if isinstance(readme, dict) and readme.get("text"):
        info.readme = str(readme["text"])
    elif isinstance(readme_file, str) and (root / readme_file).is_file():
        info.readme_path = root / readme_file
        info.readme = info.readme_path.read_text(encoding="utf-8", errors="replace")
    for import_root in (root / "src", root):
        for ep in info.entry_points:
            top = ep.module.split(".")[0]
            pkg = import_root / top
            if pkg.is_dir() or (import_root / f"{top}.py").is_file():
                path = pkg if pkg.is_dir() else import_root / f"{top}.py"
                if path not in info.package_dirs:
                    info.package_dirs.append(path)
                if str(import_root) not in info.sys_path:
                    info.sys_path.append(str(import_root))
    if info.version is None:
        for pkg in info.package_dirs:
            if pkg.is_dir() and (found := _static_version(pkg)):
                info.version = found
                break


def _split_requirements(requires: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    from packaging.requirements import InvalidRequirement, Requirement

    base: list[str] = []
    extras: dict[str, list[str]] = {}
    for text in requires:
        match = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", text)
        if not match:
            base.append(text)
            continue
        try:
            req = Requirement(text)
            req.marker = None
            plain = str(req)
        except InvalidRequirement:
            plain = text.split(";", 1)[0].strip()
        extras.setdefault(match.group(1), []).append(plain)
    return base, extras


def _load_distribution(name: str, info: ProjectInfo, findings: list[Finding]) -> bool:
    from importlib import metadata

    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    meta = dist.metadata
    info.name = meta["Name"]
    info.version = dist.version
    info.requires, info.extras = _split_requirements(list(dist.requires or []))
    for extra in meta.get_all("Provides-Extra") or []:
        info.extras.setdefault(extra, [])
    info.entry_points = [
        EntryPointInfo(ep.name, ep.value) for ep in dist.entry_points if ep.group == GROUP
    ]
    info.readme = meta.get_payload() or meta.get("Description") or ""  # type: ignore[attr-defined]
    for ep in info.entry_points:
        top = ep.module.split(".")[0]
        # find_spec of a top-level name locates it without executing it.
        spec = importlib.util.find_spec(top)
        if spec is None:
            continue
        if spec.submodule_search_locations:
            paths = [Path(p) for p in spec.submodule_search_locations]
        elif spec.origin:
            paths = [Path(spec.origin)]
        else:
            paths = []
        for path in paths:
            if path not in info.package_dirs:
                info.package_dirs.append(path)
            # The sandbox must find it even when it was found through PYTHONPATH.
            if str(path.parent) not in info.sys_path:
                info.sys_path.append(str(path.parent))
    return True


def load_project(target: str | Path) -> tuple[ProjectInfo, list[Finding]]:
    """Read ``target`` (a directory with ``pyproject.toml`` or a distribution name)."""
    findings: list[Finding] = []
    text = str(target)
    path = Path(text).expanduser()
    if path.is_file() and path.name == "pyproject.toml":
        path = path.parent
    if path.is_dir() and (path / "pyproject.toml").is_file():
        info = ProjectInfo(target=text, kind="path", root=path.resolve())
        _load_path(path.resolve(), info, findings)
        return info, findings
    info = ProjectInfo(target=text, kind="distribution")
    if not _load_distribution(text, info, findings):
        findings.append(
            Finding.make(
                "LAV001",
                f"{text!r} is not a directory with a pyproject.toml nor an installed distribution",
                hint="Pass a project directory or a distribution name shown by `pip list`.",
            )
        )
    return info, findings
