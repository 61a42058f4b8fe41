"""Static checks: packaging metadata, an AST scan of the sources, credentials, MCP shape.

Nothing here imports or runs plugin code: sources are parsed with :mod:`ast` and data
files are read as text.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from lightagent.connectors.findings import Finding
from lightagent.connectors.project import ProjectInfo

__all__ = [
    "check_credentials_in_mapping",
    "check_mcp_servers",
    "check_metadata",
    "is_placeholder",
    "scan_sources",
]

MAX_SOURCE_BYTES = 1_000_000
_ALLOW = re.compile(r"#\s*lightagent:\s*allow\s+([A-Z0-9, ]+)")
_ALLOW_FILE = re.compile(r"#\s*lightagent:\s*allow-file\s+([A-Z0-9, ]+)")
CREDENTIAL_KEY = re.compile(
    r"(?i)(api[_-]?key|apikey|secret|(^|[_-])token$|access[_-]?token|auth[_-]?token|"
    r"passw(or)?d|authorization|access[_-]?key|private[_-]?key|credential)"
)
# Shapes of well-known provider keys, flagged wherever they appear.
TOKEN_SHAPES = re.compile(
    r"(sk-(proj-|ant-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|"
    r"xox[abpr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,})"
)
_PLACEHOLDER_HINTS = (
    "${",
    "{{",
    "your_",
    "your-",
    "replace",
    "env:",
    "changeme",
    "example",
    "xxx",
    "...",
    "<",
)


def is_placeholder(value: str) -> bool:
    """True for values that are clearly not a real secret (``${VAR}``, ``<key>``, ``your_key``…)."""
    text = value.strip()
    if len(text) < 8 or " " in text:
        return True
    lowered = text.lower()
    if any(h in lowered for h in _PLACEHOLDER_HINTS):
        return True
    # An environment-variable name (OPENAI_API_KEY) is a reference, not a secret.
    return bool(re.fullmatch(r"[A-Z][A-Z0-9_]*", text))


def _literal_credential(key: str, value: Any) -> bool:
    if not isinstance(value, str):
        return False
    if TOKEN_SHAPES.search(value):
        return True
    if not CREDENTIAL_KEY.search(key):
        return False
    text = value.removeprefix("Bearer ").removeprefix("bearer ").removeprefix("Basic ")
    # Real secrets are long and mix letters and digits; "plain-value" or "anything" are not.
    looks_random = len(text) >= 12 and re.search(r"[A-Za-z]", text) and re.search(r"\d", text)
    return bool(looks_random) and not is_placeholder(text)


def check_credentials_in_mapping(data: Any, location: str, path: str = "") -> list[Finding]:
    """LAV070 for each credential-like key holding a literal (non-placeholder) value."""
    out: list[Finding] = []
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(value, str) and _literal_credential(str(key), value):
                out.append(
                    Finding.make(
                        "LAV070",
                        f"`{where}` holds a literal credential",
                        location,
                        hint='Read it from the environment instead, e.g. "${OPENAI_API_KEY}".',
                    )
                )
            else:
                out.extend(check_credentials_in_mapping(value, location, where))
    elif isinstance(data, list):
        for index, item in enumerate(data):
            out.extend(check_credentials_in_mapping(item, location, f"{path}[{index}]"))
    elif isinstance(data, str) and TOKEN_SHAPES.search(data):
        out.append(Finding.make("LAV070", f"`{path}` holds a literal credential", location))
    return out


_MCP_KEYS = {
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "transport",
    "type",
    "disabled",
    "namespace",
    "namespace_tools",
    "reconnect_attempts",
    "timeout",
    "description",
}
_TRANSPORTS = {"stdio", "sse", "streamable-http", "streamable_http", "http"}


def check_mcp_servers(servers: Any, location: str) -> list[Finding]:
    """LAV060 for malformed ``mcpServers`` entries (accepts the outer or the inner dict)."""
    if isinstance(servers, dict) and set(servers) == {"mcpServers"}:
        servers = servers["mcpServers"]
    if not isinstance(servers, dict):
        return [
            Finding.make("LAV060", "mcpServers must be an object of name -> settings", location)
        ]
    out: list[Finding] = []

    def bad(name: str, text: str, level: str | None = None) -> None:
        out.append(Finding.make("LAV060", f"MCP server {name!r}: {text}", location, level=level))  # type: ignore[arg-type]

    for name, cfg in servers.items():
        if not isinstance(cfg, dict):
            bad(name, "settings must be an object")
            continue
        has_cmd, has_url = "command" in cfg, "url" in cfg
        if has_cmd == has_url:
            bad(name, "needs exactly one of `command` (stdio) or `url` (SSE / streamable HTTP)")
        if has_cmd and (not isinstance(cfg["command"], str) or not cfg["command"].strip()):
            bad(name, "`command` must be a non-empty string")
        if "args" in cfg and (
            not isinstance(cfg["args"], list) or not all(isinstance(a, str) for a in cfg["args"])
        ):
            bad(name, "`args` must be a list of strings")
        if has_url and (not isinstance(cfg["url"], str) or not re.match(r"https?://", cfg["url"])):
            bad(name, "`url` must be an http:// or https:// URL")
        for key in ("env", "headers"):
            if key in cfg and (
                not isinstance(cfg[key], dict)
                or not all(isinstance(k, str) and isinstance(v, str) for k, v in cfg[key].items())
            ):
                bad(name, f"`{key}` must be an object of string -> string")
        transport = cfg.get("transport", cfg.get("type"))
        if transport is not None and transport not in _TRANSPORTS:
            bad(name, f"unknown transport {transport!r}; use one of {sorted(_TRANSPORTS)}")
        for key in ("disabled", "namespace_tools"):
            if key in cfg and not isinstance(cfg[key], bool):
                bad(name, f"`{key}` must be true or false")
        if "namespace" in cfg and not isinstance(cfg["namespace"], str):
            bad(name, "`namespace` must be a string")
        attempts = cfg.get("reconnect_attempts", 0)
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
            bad(name, "`reconnect_attempts` must be a non-negative integer")
        unknown = sorted(set(cfg) - _MCP_KEYS)
        if unknown:
            bad(name, f"unknown keys {unknown}", level="warning")
        out.extend(check_credentials_in_mapping(cfg, location, f"mcpServers.{name}"))
    return out


# --------------------------------------------------------------------------- metadata


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


# --------------------------------------------------------------------------- AST scan

_MODULE_CODES = {
    "subprocess": "LAV081",
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
}
_CALL_PREFIX_CODES = {"os.exec": "LAV082", "os.spawn": "LAV082", "os.posix_spawn": "LAV082"}


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
                and _literal_credential(kw.arg, kw.value.value)
            ):
                self.flag("LAV070", kw.value, f"argument `{kw.arg}` is a literal credential")
        self.generic_visit(node)

    def _assigned(self, target: ast.AST, value: ast.AST) -> None:
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
        if name and isinstance(value, ast.Constant) and _literal_credential(name, value.value):
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
                and _literal_credential(key.value, value.value)
            ):
                self.flag("LAV070", value, f"key `{key.value}` holds a literal credential")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and TOKEN_SHAPES.search(node.value):
            self.flag("LAV070", node, "a string has the shape of a provider API key")


def _files(dirs: Iterable[Path]) -> Iterator[Path]:
    for base in dirs:
        if base.is_file():
            yield base
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield path


_DATA_SUFFIXES = {".json", ".toml", ".yaml", ".yml", ".env", ".cfg", ".ini", ".txt"}
_DATA_PAIR = re.compile(r"""["']?([A-Za-z0-9_.-]+)["']?\s*[:=]\s*["']([^"'\n]+)["']""")


def scan_sources(dirs: Iterable[Path], root: Path | None = None) -> list[Finding]:
    """AST-scan every ``.py`` file and text-scan data files under ``dirs``."""
    out: list[Finding] = []
    for path in _files(dirs):
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
                    if _literal_credential(key, value):
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


def check_hookimpls_static(dirs: Iterable[Path], root: Path | None = None) -> list[Finding]:
    """LAV030 / LAV031 from the source alone: ``@hookimpl`` functions against the hookspecs."""
    import inspect

    from lightagent import hookspecs

    marker = f"{hookspecs.PROJECT}_spec"
    specs = {
        name: list(inspect.signature(func).parameters)
        for name, func in vars(hookspecs).items()
        if callable(func) and hasattr(func, marker)
    }
    out: list[Finding] = []
    for path in _files(dirs):
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
                out.append(
                    Finding.make(
                        "LAV030", f"hookimpl {node.name!r}: lightagent has no hook {hook!r}", where
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
