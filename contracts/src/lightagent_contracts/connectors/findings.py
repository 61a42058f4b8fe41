"""Validator findings: stable ``LAV…`` codes, levels, locations and the report."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["FINDING_CODES", "Finding", "Level", "ValidationReport"]

Level = Literal["error", "warning", "info"]

# Code -> (default level, what it means). Codes are public: add, never rename or reuse.
FINDING_CODES: dict[str, tuple[Level, str]] = {
    # packaging and metadata (static)
    "LAV001": ("error", "the target is neither a project directory nor an installed distribution"),
    "LAV002": ("error", "no entry point in group `lightagent`"),
    "LAV003": (
        "error",
        "the `lightagent` entry points are not exactly one named after the distribution",
    ),
    "LAV004": ("error", "no requirement on lightagent-core"),
    "LAV005": ("error", "the lightagent-core requirement excludes the running core"),
    "LAV006": ("error", "the project metadata cannot be read"),
    "LAV007": ("error", "the entry point's module cannot be found"),
    # the manifest
    "LAV010": ("warning", "the plugin returns no manifest from `lightagent_manifest()`"),
    "LAV011": ("error", "the manifest is invalid"),
    "LAV012": ("error", "the manifest's name or version differs from the distribution's"),
    "LAV013": ("warning", "the manifest has no description"),
    "LAV014": (
        "error",
        "the manifest's core_requires excludes the running core",
    ),
    "LAV015": ("error", "a component object in the manifest lacks what its kind needs"),
    # the sandboxed import
    "LAV020": ("error", "importing the plugin raised"),
    "LAV021": ("error", "the plugin tried a network connection while loading"),
    "LAV022": (
        "error",
        "the plugin tried to write a file outside the temporary directory while loading",
    ),
    "LAV023": ("error", "importing the plugin exceeded the time limit and was stopped"),
    "LAV024": ("error", "importing the plugin is slower than the import budget"),
    "LAV025": ("error", "importing the plugin uses more memory than the memory budget"),
    "LAV026": (
        "error",
        "the plugin tried to start a process while loading (or left one running)",
    ),
    "LAV027": ("warning", "the plugin imports a heavy library at import time"),
    "LAV028": ("error", "the sandbox could not run"),
    # hook implementations
    "LAV030": ("error", "a hookimpl names a hook that lightagent does not define"),
    "LAV031": ("error", "a hookimpl takes an argument its hookspec does not provide"),
    "LAV032": ("error", "a hook implementation raised"),
    "LAV033": ("warning", "the plugin implements no hook"),
    "LAV034": ("error", "a registration call is malformed"),
    "LAV035": (
        "error",
        "the real plugin host does not load it (e.g. a name conflict with the core)",
    ),
    "LAV036": ("warning", "a hookimpl uses a hook that moved to another distribution"),
    # registered objects
    "LAV040": ("error", "a registered object does not follow its protocol"),
    "LAV041": ("error", "a provider name is invalid or registered twice"),
    "LAV042": ("warning", "declared in the manifest but not registered"),
    "LAV043": ("warning", "registered but not declared in the manifest"),
    "LAV044": ("error", "a command is malformed or duplicated"),
    # tools
    "LAV050": ("error", "a tool schema is invalid"),
    "LAV051": ("error", "two tools share a name"),
    "LAV052": ("warning", "a tool has no description"),
    "LAV053": (
        "error",
        "an inline tool's module evaluates code, starts processes, unpickles, calls native code or imports dynamically",
    ),
    "LAV054": ("error", "an inline tool has no source file, so its code cannot be checked"),
    # MCP settings
    "LAV060": ("error", "MCP server settings are malformed"),
    # credentials
    "LAV070": ("error", "a literal credential is present"),
    # AST scan
    "LAV080": ("error", "eval/exec/compile on dynamic code"),
    "LAV081": (
        "warning",
        "subprocess / multiprocessing / ProcessPoolExecutor use (starts processes)",
    ),
    "LAV082": ("warning", "os.system / os.popen / os.exec* / os.spawn* / os.fork"),
    "LAV083": ("warning", "pickle / marshal / shelve deserialisation"),
    "LAV084": ("warning", "ctypes / cffi native calls"),
    "LAV085": ("warning", "a dynamic import (__import__ / importlib.import_module)"),
    "LAV086": ("info", "network client use"),
    "LAV087": ("warning", "a source file is very large"),
    "LAV088": ("error", "a source file does not parse"),
    "LAV089": ("error", "a symlink points outside the project (it is not followed)"),
    # extras
    "LAV090": ("error", "an extra's requirement string is invalid"),
    "LAV091": ("error", "an extra's requirement conflicts with the installed version"),
    "LAV092": ("error", "the manifest names an extra the distribution does not declare"),
    "LAV093": ("info", "an extra's requirement is not installed (not checked offline)"),
    # skills
    "LAV094": ("error", "a skill named by the manifest has no folder with a SKILL.md"),
    # docs
    "LAV095": ("error", "no README / long description"),
    "LAV096": ("error", "a documentation file named by the manifest does not exist"),
    "LAV097": ("info", "a documentation URL (not checked offline)"),
}

# Code -> what an author can do about it, when the check has nothing more particular to say.
# Hints name commands and packages an author has, never a path inside lightagent's repository.
_HINTS: dict[str, str] = {
    "LAV001": "Pass a project directory (with pyproject.toml) or a distribution name shown by `pip list`.",
    "LAV002": 'Add [project.entry-points.lightagent] "<dist-name>" = "<package>.plugin".',
    "LAV003": "Declare exactly one entry point in group `lightagent`, named after the distribution.",
    "LAV004": "Add lightagent-core with a compatible range to the dependencies.",
    "LAV005": "Widen the lightagent-core range, or install a core version it admits.",
    "LAV006": "Fix pyproject.toml so that `pip install -e .` accepts it.",
    "LAV007": "Point the entry point at a module of the project (package.plugin).",
    "LAV010": "Implement lightagent_manifest() returning ConnectorManifest(name=..., version=...).",
    "LAV011": "Fix the fields named; `lightagent new-plugin NAME` writes a manifest that passes.",
    "LAV012": "Use the distribution's name and version (importlib.metadata.version) in the manifest.",
    "LAV013": "Give the manifest a one-line description=.",
    "LAV014": "Widen core_requires, or install a core version it admits.",
    "LAV015": "Give each tool a tool_info dict (or @tool), each hook a phase method, each memory adapter store() and retrieve().",
    "LAV020": "Fix the import error, or declare the missing package in the project's dependencies.",
    "LAV021": "Open connections when a tool or provider is first used, not at import.",
    "LAV022": "Write files when a tool or provider is first used, under a folder the user chooses.",
    "LAV023": "Defer slow work (network, model loading, big files) until the provider is first used.",
    "LAV024": "Import heavy dependencies inside functions, not at module level.",
    "LAV025": "Load large data or models when first used, not at import.",
    "LAV026": "Start processes only when a tool runs, never at import.",
    "LAV027": "Import the library inside the functions that use it.",
    "LAV028": "Run the validator again; `--static-only` checks without importing the plugin.",
    "LAV030": "Use a hook of lightagent.hookspecs, or declare your own with register_hookspecs.",
    "LAV031": "Take only the arguments the hookspec names (usually `register`).",
    "LAV032": "Hooks only register objects; move other work into the objects they register.",
    "LAV033": "Implement at least one register_* hook with @hookimpl.",
    "LAV034": "Call register(name, provider) with a name string and the provider.",
    "LAV035": "Rename what clashes with the core or another plugin; `lightagent plugins` shows the error.",
    "LAV036": "Add the distribution that now defines the hook to the dependencies.",
    "LAV040": "Give the object the methods its kind's protocol needs.",
    "LAV041": "Use a unique name of letters, digits, '-', '_' or '.'.",
    "LAV042": "Register it, or remove it from the manifest.",
    "LAV043": "Declare it in the manifest, or stop registering it.",
    "LAV044": "Use a unique command name and callables for handler and configure.",
    "LAV050": "Describe parameters with a JSON-schema object (@tool builds one from type hints).",
    "LAV051": "Give each tool its own name (@tool(name=...)).",
    "LAV052": "Give the tool a docstring or description=; the model reads it.",
    "LAV053": "Keep the tool's module free of subprocess, os.system, eval, pickle and ctypes, or ship it as a plugin (`lightagent new-plugin NAME`) where the sandboxed import checks it.",
    "LAV054": "Define the tool with def in a .py file (a module or package), not in exec() or an interactive session.",
    "LAV060": "Follow the mcpServers shape: `command` and `args` for stdio, or `url` (and `headers`) for HTTP.",
    "LAV070": 'Read it from the environment instead: "${API_TOKEN}", "Bearer ${API_TOKEN}".',
    "LAV080": "Do not evaluate text as code; parse it (json, ast.literal_eval).",
    "LAV081": "Start processes only where the user asked for it, or mark the line `# lightagent: allow LAV081`.",
    "LAV082": "Avoid the shell: pass subprocess a list of arguments, or mark the line `# lightagent: allow LAV082`.",
    "LAV083": "Read data with json (or another format that cannot run code).",
    "LAV084": "Prefer a pure-Python library, or mark the line `# lightagent: allow LAV084`.",
    "LAV085": "Import modules by name at the top of the file.",
    "LAV086": "No action needed; network use is listed for reviewers.",
    "LAV087": "Split the file, or keep generated data out of the package.",
    "LAV088": "Fix the syntax error (`python -m py_compile FILE`).",
    "LAV089": "Replace the symlink with the file it points to, or remove it.",
    "LAV090": 'Write each requirement as pip does, e.g. "httpx>=0.27".',
    "LAV091": "Widen the requirement, or upgrade the installed package.",
    "LAV092": "Declare the extra in [project.optional-dependencies], or drop it from the manifest.",
    "LAV093": "No action needed; `pip install '<dist>[extra]'` checks it.",
    "LAV094": "Ship each skill as a folder holding SKILL.md (and scripts/, references/, assets/).",
    "LAV095": 'Set readme = "README.md" in pyproject.toml.',
    "LAV096": "Ship the file in the project, or give an https:// URL.",
    "LAV097": "No action needed; URLs are not fetched offline.",
}


@dataclass(frozen=True)
class Finding:
    """One result of a check: a stable ``code``, a ``level``, a message and a location."""

    code: str
    level: Level
    message: str
    location: str = ""
    hint: str = ""

    @classmethod
    def make(
        cls,
        code: str,
        message: str,
        location: str = "",
        *,
        level: Level | None = None,
        hint: str = "",
    ) -> Finding:
        """A finding with the code's default level and hint unless ``level``/``hint`` is given."""
        default, _ = FINDING_CODES[code]
        return cls(code, level or default, message, location, hint or _HINTS.get(code, ""))

    def to_dict(self) -> dict[str, str]:
        """A JSON-safe dict."""
        return asdict(self)

    def format(self) -> str:
        """One line: ``location: LEVEL CODE message``."""
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.level.upper()} {self.code} {self.message}"


@dataclass
class ValidationReport:
    """Everything ``validate_connector`` found; ``passed`` is true when there is no error."""

    target: str
    distribution: str | None = None
    version: str | None = None
    findings: list[Finding] = field(default_factory=list)
    import_seconds: float | None = None
    registered: dict[str, list[str]] = field(default_factory=dict)
    manifest: dict[str, Any] | None = None
    #: How the sandboxed import was contained (``network_namespace``, ``subreaper``); None without one.
    isolation: dict[str, bool] | None = None

    @property
    def errors(self) -> list[Finding]:
        """Findings of level ``error``."""
        return [f for f in self.findings if f.level == "error"]

    @property
    def warnings(self) -> list[Finding]:
        """Findings of level ``warning``."""
        return [f for f in self.findings if f.level == "warning"]

    @property
    def passed(self) -> bool:
        """True when no finding is an error."""
        return not self.errors

    @property
    def valid(self) -> bool:
        """The seeds' name for :attr:`passed`."""
        return self.passed

    def codes(self) -> set[str]:
        """The set of finding codes (handy in tests)."""
        return {f.code for f in self.findings}

    def add(self, code: str, message: str, location: str = "", **kw: Any) -> Finding:
        """Record a finding and return it."""
        finding = Finding.make(code, message, location, **kw)
        self.findings.append(finding)
        return finding

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (what ``--json`` prints)."""
        return {
            "target": self.target,
            "distribution": self.distribution,
            "version": self.version,
            "passed": self.passed,
            "import_seconds": self.import_seconds,
            "registered": self.registered,
            "manifest": self.manifest,
            "isolation": self.isolation,
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, default=str)

    def format_text(self) -> str:
        """A human report: one line per finding, then a verdict line."""
        lines = [
            f.format() + (f"\n    hint: {f.hint}" if f.hint else "")
            for f in sorted(self.findings, key=_order)
        ]
        name = self.distribution or self.target
        verdict = "PASS" if self.passed else "FAIL"
        timing = f", import {self.import_seconds:.2f}s" if self.import_seconds is not None else ""
        lines.append(
            f"{verdict} {name} {self.version or ''}".rstrip()
            + f" ({len(self.errors)} errors, {len(self.warnings)} warnings{timing})"
        )
        return "\n".join(lines)


def _order(finding: Finding) -> tuple[int, str, str, int]:
    file, _, line = finding.location.rpartition(":")
    if not line.isdigit():
        file, line = finding.location, "0"
    return ({"error": 0, "warning": 1, "info": 2}[finding.level], finding.code, file, int(line))
