"""Plugins, examples and docs use only public names: no distribution reaches into another's
internals, so the API snapshot (each package's ``__all__``) really is the contract.

Module-level rules (no private modules, no import circles, the core's layers) are
import-linter contracts in pyproject.toml, run by ``make lint``; this test checks the
names, which import-linter does not: every ``from <other distribution's module> import
name`` takes a name in that module's ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path

import pytest
from lightagent_contracts.api_snapshot import DISTRIBUTIONS

ROOT = Path(__file__).resolve().parents[3]
# distribution folder -> import package (the snapshot's list: every distribution)
PACKAGES = {
    ("contracts" if dist == "lightagent-contracts" else dist): package
    for dist, package in DISTRIBUTIONS.items()
}
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _imports(tree: ast.AST) -> list[tuple[str, str, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.module, alias.name, node.lineno) for alias in node.names)
    return found


def _sources() -> list[tuple[str, str | None, str]]:
    """(where, own package or None, source text) for every file that must use public names."""
    out: list[tuple[str, str | None, str]] = []
    for dist, package in PACKAGES.items():
        for path in sorted((ROOT / dist / "src").rglob("*.py")):
            out.append((str(path.relative_to(ROOT)), package, path.read_text()))
    for path in sorted((ROOT / "examples").rglob("*.py")):
        out.append((str(path.relative_to(ROOT)), None, path.read_text()))
    docs = [*sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("*/README.md"))]
    for path in [ROOT / "README.md", *docs]:
        for i, block in enumerate(_BLOCK.findall(path.read_text())):
            out.append((f"{path.relative_to(ROOT)} block {i + 1}", None, block))
    return out


from lightagent.lazy import plugin_exports  # noqa: E402


def _public(module: str, name: str) -> str | None:
    """None when ``name`` is public in ``module``, else why not."""
    if any(part.startswith("_") for part in module.split(".")):
        return f"{module} is a private module"
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None  # an optional distribution that is not installed: nothing to check
    exported = getattr(mod, "__all__", None)
    if exported is None:
        return f"{module} has no __all__"
    if name != "*" and name not in exported:
        if module == "lightagent" and name in plugin_exports():
            return None  # a distribution's name, exported from lightagent by entry point
        if not name.startswith("_") and importlib.util.find_spec(f"{module}.{name}"):
            return None  # a public submodule (``from lightagent import hookspecs``)
        return f"{name} is not in {module}.__all__"
    return None


def test_every_cross_distribution_import_takes_a_public_name():
    problems = []
    ours = set(PACKAGES.values())
    for where, own, text in _sources():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue  # a fragment (the docs mark those); the docs tests run the rest
        for module, name, line in _imports(tree):
            top = module.split(".")[0]
            if top not in ours or top == own:
                continue
            why = _public(module, name)
            if why:
                problems.append(f"{where}:{line}: from {module} import {name}: {why}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("package", sorted(PACKAGES.values()))
def test_every_name_in_a_package_all_exists(package):
    mod = importlib.import_module(package)
    missing = [n for n in mod.__all__ if n not in ("__version__",) and not _loads(mod, n)]
    assert not missing, missing


def _loads(mod: object, name: str) -> bool:
    try:
        getattr(mod, name)
    except ImportError:
        return True  # an optional distribution's name (LA-MISSING-EXTRA): checked elsewhere
    except AttributeError:
        return False
    return True


def test_the_import_contracts_cover_every_distribution():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    packages = set(DISTRIBUTIONS.values())
    assert set(config["root_packages"]) == packages
    contracts = {c["type"]: c for c in config["contracts"] if c["type"] != "forbidden"}
    forbidden = {
        c["source_modules"][0]: set(c["forbidden_modules"])
        for c in config["contracts"]
        if c["type"] == "forbidden"
    }
    assert set(contracts["acyclic_siblings"]["ancestors"]) == packages
    # lightagent-control is the one distribution others build on (a declared dependency)
    plugins = packages - {"lightagent"}
    assert set(contracts["independence"]["modules"]) == plugins - {"lightagent_control"}
    assert forbidden == {
        "lightagent": plugins,
        "lightagent_control": plugins - {"lightagent_control"},
    }
    # every top-level module of the core has its place in the layers
    layered = {
        name.strip()
        for layer in contracts["layers"]["layers"]
        for name in layer.replace(":", "|").split("|")
    }
    core = ROOT / "lightagent-core" / "src" / "lightagent"
    modules = {p.stem for p in core.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in core.iterdir() if (p / "__init__.py").exists()}
    assert modules - {"py"} <= layered, sorted(modules - layered)
