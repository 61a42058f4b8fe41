"""The static scan: sources parsed with :mod:`ast`, data files read as text.

Nothing here imports or runs plugin code. Flags risky calls (eval/exec, subprocess,
os.system, pickle, ctypes, dynamic imports), literal credentials, malformed MCP settings
in JSON files, and ``@hookimpl`` functions that do not match the hookspecs.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from lightagent_contracts.connectors.credentials import TOKEN_SHAPES, literal_credential
from lightagent_contracts.connectors.findings import Finding
from lightagent_contracts.connectors.mcp_settings import check_mcp_servers

__all__ = ["MAX_SOURCE_BYTES", "check_hookimpls_static", "scan_sources"]

MAX_SOURCE_BYTES = 1_000_000
_ALLOW = re.compile(r"#\s*lightagent:\s*allow\s+([A-Z0-9, ]+)")
_ALLOW_FILE = re.compile(r"#\s*lightagent:\s*allow-file\s+([A-Z0-9, ]+)")


_MODULE_CODES = {
    "subprocess": "LAV081",
    # new interpreters that run without the importer's audit hooks
    "multiprocessing": "LAV081",
    "concurrent.futures.process": "LAV081",
    "pty": "LAV082",
    "pickle": "LAV083",
    "cPickle": "LAV083",
    "marshal": "LAV083",
    "shelve": "LAV083",
    "dill": "LAV083",
    "cloudpickle": "LAV083",
    "ctypes": "LAV084",
    "cffi": "LAV084",
    "socket": "LAV086",
    "requests": "LAV086",
    "httpx": "LAV086",
    "aiohttp": "LAV086",
    "urllib.request": "LAV086",
    "http.client": "LAV086",
}
_CALL_CODES = {
    "eval": "LAV080",
    "exec": "LAV080",
    "compile": "LAV080",
    "__import__": "LAV085",
    "importlib.import_module": "LAV085",
    "importlib.__import__": "LAV085",
    "os.system": "LAV082",
    "os.popen": "LAV082",
    "asyncio.create_subprocess_exec": "LAV081",
    "asyncio.create_subprocess_shell": "LAV081",
    "concurrent.futures.ProcessPoolExecutor": "LAV081",
}
_CALL_PREFIX_CODES = {
    "os.exec": "LAV082",
    "os.spawn": "LAV082",
    "os.posix_spawn": "LAV082",
    "os.fork": "LAV082",
}


class _Scanner(ast.NodeVisitor):
    def __init__(self, file: str, lines: list[str]) -> None:
        self.file = file
        self.lines = lines
        self.file_allowed = {
            code
            for line in lines
            if (m := _ALLOW_FILE.search(line))
            for code in m.group(1).replace(",", " ").split()
        }
        self.aliases: dict[str, str] = {}
        self.flagged: set[tuple[str, int]] = set()
        self.findings: list[Finding] = []

    def flag(self, code: str, node: ast.AST, message: str) -> None:
        if code in self.file_allowed:
            return
        line = getattr(node, "lineno", 0)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        allowed = _ALLOW.search(text)
        if allowed and code in allowed.group(1).replace(",", " ").split():
            return
        if (code, line) in self.flagged and code == "LAV070":
            return  # one credential finding per line is enough
        self.flagged.add((code, line))
        self.findings.append(Finding.make(code, message, f"{self.file}:{line}"))

    def _module(self, name: str, node: ast.AST) -> None:
        for prefix in (name, name.split(".")[0]):
            if prefix in _MODULE_CODES:
                self.flag(_MODULE_CODES[prefix], node, f"imports {name}")
                return

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
            self._module(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0:
            self._module(module, node)
            for alias in node.names:
                full = f"{module}.{alias.name}"
                self.aliases[alias.asname or alias.name] = full
                if full in _CALL_CODES or any(full.startswith(p) for p in _CALL_PREFIX_CODES):
                    self.flag(_CALL_CODES.get(full, "LAV082"), node, f"imports {full}")

    def _dotted(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Call(self, node: ast.Call) -> None:
        name = self._dotted(node.func)
        if name:
            code = _CALL_CODES.get(name)
            if code is None:
                code = next((c for p, c in _CALL_PREFIX_CODES.items() if name.startswith(p)), None)
            if code is None and name.startswith("subprocess."):
                code = "LAV081"
            if code:
                self.flag(code, node, f"calls {name}()")
        for kw in node.keywords:
            if (
                kw.arg
                and isinstance(kw.value, ast.Constant)
                and literal_credential(kw.arg, kw.value.value)
            ):
                self.flag("LAV070", kw.value, f"argument `{kw.arg}` is a literal credential")
        self.generic_visit(node)

    def _assigned(self, target: ast.AST, value: ast.AST) -> None:
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
        if name and isinstance(value, ast.Constant) and literal_credential(name, value.value):
            self.flag("LAV070", value, f"`{name}` is assigned a literal credential")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(target, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._assigned(node.target, node.value)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            if (
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and isinstance(value, ast.Constant)
                and literal_credential(key.value, value.value)
            ):
                self.flag("LAV070", value, f"key `{key.value}` holds a literal credential")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and TOKEN_SHAPES.search(node.value):
            self.flag("LAV070", node, "a string has the shape of a provider API key")


def _files(
    dirs: Iterable[Path], root: Path | None = None, escaped: list[Path] | None = None
) -> Iterator[Path]:
    """The files under ``dirs``; a symlink leading out of ``root`` (or of its own base
    folder) is never read, only added to ``escaped``."""
    for base in dirs:
        if base.is_file():
            yield base
            continue
        inside = (root or base).resolve()
        for path in sorted(base.rglob("*")):
            if "__pycache__" in path.parts:
                continue
            if path.is_symlink() and not path.resolve().is_relative_to(inside):
                if escaped is not None:
                    escaped.append(path)
                continue
            if path.is_file():
                yield path


_DATA_SUFFIXES = {".json", ".toml", ".yaml", ".yml", ".env", ".cfg", ".ini", ".txt"}
_DATA_PAIR = re.compile(r"""["']?([A-Za-z0-9_.-]+)["']?\s*[:=]\s*["']([^"'\n]+)["']""")


def scan_sources(dirs: Iterable[Path], root: Path | None = None) -> list[Finding]:
    """AST-scan every ``.py`` file and text-scan data files under ``dirs``."""
    out: list[Finding] = []
    escaped: list[Path] = []
    for path in _files(dirs, root, escaped):
        shown = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
        if path.suffix == ".py":
            if path.stat().st_size > MAX_SOURCE_BYTES:
                out.append(Finding.make("LAV087", f"{path.stat().st_size} bytes", shown))
            source = path.read_text(encoding="utf-8", errors="replace")
            try:
                tree = ast.parse(source, filename=str(path))
            except SyntaxError as exc:
                out.append(
                    Finding.make("LAV088", f"syntax error: {exc.msg}", f"{shown}:{exc.lineno or 0}")
                )
                continue
            scanner = _Scanner(shown, source.splitlines())
            scanner.visit(tree)
            out.extend(scanner.findings)
        elif path.suffix in _DATA_SUFFIXES and path.stat().st_size <= MAX_SOURCE_BYTES:
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), 1):
                for key, value in _DATA_PAIR.findall(line):
                    if literal_credential(key, value):
                        out.append(
                            Finding.make(
                                "LAV070", f"`{key}` holds a literal credential", f"{shown}:{number}"
                            )
                        )
            if path.suffix == ".json" and "mcpServers" in text:
                try:
                    data = json.loads(text)
                except ValueError:
                    continue
                if isinstance(data, dict) and "mcpServers" in data:
                    out.extend(check_mcp_servers(data["mcpServers"], shown))
    for path in escaped:
        shown = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
        out.append(Finding.make("LAV089", f"-> {os.readlink(path)}", shown))
    return out


def _hookimpl_decorated(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[int, str | None] | None:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
        if name == "hookimpl":
            specname = None
            if isinstance(deco, ast.Call):
                for kw in deco.keywords:
                    if kw.arg == "specname" and isinstance(kw.value, ast.Constant):
                        specname = str(kw.value.value)
            return deco.lineno, specname
    return None


def _own_hookspecs(dirs: Iterable[Path], root: Path | None) -> tuple[dict[str, list[str]], bool]:
    """``@hookspec`` functions in the plugin's own sources (hook name -> arguments), and
    whether it implements ``register_hookspecs`` (then only the loaded plugin can tell)."""
    found: dict[str, list[str]] = {}
    declares = False
    for path in _files(dirs, root):
        if path.suffix != ".py":
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.name == "register_hookspecs" and _hookimpl_decorated(node):
                declares = True
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
                if name == "hookspec":
                    args = node.args
                    found[node.name] = [
                        a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
                    ]
    return found, declares


def check_hookimpls_static(dirs: Iterable[Path], root: Path | None = None) -> list[Finding]:
    """LAV030 / LAV031 from the source alone: ``@hookimpl`` functions against the hookspecs
    (the kernel's, those that moved to other distributions, and ``@hookspec`` functions the
    plugin declares itself)."""
    from lightagent.plugins import declared_hookspecs

    specs = declared_hookspecs()
    own, declares = _own_hookspecs(dirs, root)
    specs.update(own)
    out: list[Finding] = []
    for path in _files(dirs, root):
        if path.suffix != ".py":
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        shown = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            found = _hookimpl_decorated(node)
            if found is None:
                continue
            line, specname = found
            hook = specname or node.name
            where = f"{shown}:{line}"
            if hook not in specs:
                if not declares:  # else the loaded plugin's check knows its declared hooks
                    out.append(
                        Finding.make(
                            "LAV030",
                            f"hookimpl {node.name!r}: lightagent has no hook {hook!r}",
                            where,
                        )
                    )
                continue
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            required = [a.arg for a in positional[: len(positional) - len(args.defaults)]]
            required += [
                a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None
            ]
            unknown = [a for a in required if a not in specs[hook]]
            if unknown:
                out.append(
                    Finding.make(
                        "LAV031",
                        f"hookimpl {hook!r} takes {', '.join(unknown)}, which the hookspec does not provide "
                        f"(it provides: {', '.join(specs[hook]) or 'nothing'})",
                        where,
                    )
                )
    return out
