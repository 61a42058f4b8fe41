"""docs/configuration.md lists every environment variable the project's Python code reads.

The scan parses every ``.py`` file of the repository (distributions, their tests, examples,
benchmarks, scripts) and collects the names read through ``os.environ`` / ``os.getenv``
(also ``environ`` objects passed around, such as ``PluginHost(environ=...)``), through
helpers whose name contains ``env`` (``env("LIGHTAGENT_API_KEY", ...)``), constants named
``*_ENV`` and the providers' ``api_key_env`` tuples. A variable read in a new place must be
added to the page, with what it does.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "configuration.md"
_SKIP_PARTS = {".venv", "build", "dist", ".work", "__pycache__", ".git", "node_modules"}
_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
# Calls that set or clear a variable (monkeypatch.setenv …): they read nothing.
_WRITERS = frozenset({"environ", "setenv", "delenv", "putenv", "unsetenv"})


def _python_files() -> Iterator[Path]:
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_PARTS and not d.startswith(".venv"))
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(folder) / name


def _is_environ(node: ast.AST) -> bool:
    """``os.environ``, ``environ``, ``self._environ`` … (not ``environ.items()`` writes)."""
    if isinstance(node, ast.Name):
        return node.id.endswith("environ")
    return isinstance(node, ast.Attribute) and node.attr.endswith("environ")


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _strings(node: ast.AST, constants: dict[str, str]) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Name) and node.id in constants:
        yield constants[node.id]
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for item in node.elts:
            yield from _strings(item, constants)
    elif isinstance(node, ast.Starred):
        yield from _strings(node.value, constants)


def variables_read(source: str) -> set[str]:
    """The environment variable names one module reads."""
    tree = ast.parse(source)
    constants = {
        target.id: node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        args: list[ast.AST] = []
        if isinstance(node, ast.Call):
            func = node.func
            name = _callee(node)
            if isinstance(func, ast.Attribute) and _is_environ(func.value):
                if name in ("get", "pop", "setdefault"):
                    args = node.args[:1]
            elif name == "getenv":
                args = node.args[:1]
            elif "env" in name.lower() and name not in _WRITERS:
                args = list(node.args)
            args += [kw.value for kw in node.keywords if (kw.arg or "").endswith("_env")]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if _is_environ(node.value):
                args = [node.slice]
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In) for op in node.ops):
            if any(_is_environ(c) for c in node.comparators):
                args = [node.left]
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id.endswith("_ENV") for t in node.targets):
                args = [node.value]
        found.update(s for a in args for s in _strings(a, constants) if _NAME.match(s))
    return found


def project_variables() -> dict[str, list[str]]:
    """Every variable read anywhere in the repository -> the files that read it."""
    out: dict[str, list[str]] = {}
    for path in _python_files():
        for name in variables_read(path.read_text(encoding="utf-8")):
            out.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return out


def test_the_scan_finds_the_known_reads() -> None:
    """A guard against a scan that finds nothing: each way the code reads a variable counts."""
    found = project_variables()
    for name in (
        "LIGHTAGENT_REQUIRE_POSTGRES",  # os.environ.get in lightagent-contracts
        "LIGHTAGENT_STRICT_PLUGINS",  # self._environ.get in the plugin host
        "LIGHTAGENT_LOAD_PLUGINS",  # _env_list(environ, "...")
        "LIGHTAGENT_APPROVAL_KEY",  # APPROVAL_KEY_ENV = "..."; os.environ.get(APPROVAL_KEY_ENV)
        "OPENAI_BASE_URL",  # env("LIGHTAGENT_BASE_URL", "OPENAI_BASE_URL")
        "DEEPSEEK_API_KEY",  # ProviderProfile(api_key_env=(...))
        "NO_COLOR",  # the demo
    ):
        assert name in found, name
    sample = 'import os\nos.environ["A_B"]\nos.environ.get("C_D")\nos.getenv("E_F")\n"G_H" in os.environ\n'
    assert variables_read(sample) == {"A_B", "C_D", "E_F", "G_H"}
    assert variables_read('import os\nos.environ["A_B"] = "1"\n') == set()


def test_every_variable_read_is_on_the_configuration_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    missing = {
        name: files
        for name, files in sorted(project_variables().items())
        if f"`{name}`" not in text
    }
    assert missing == {}, (
        f"environment variables read by the code but not listed in {PAGE.relative_to(ROOT)} "
        f"(add each, with what it does): {missing}"
    )
