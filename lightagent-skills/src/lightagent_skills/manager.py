"""``SkillManager``: skill folders with a ``SKILL.md``, found by precedence, read within bounds.

A skill is a folder ``<directory>/<skill>/`` holding ``SKILL.md``: YAML front matter
(``name``, ``description``, optional ``tools``) and a Markdown body (the instructions the
model reads when it activates the skill), plus optional ``references/``, ``assets/`` and
``scripts/`` folders. Directories come in three levels, **agent > project > user**: a
skill name found at a higher level wins, and within one level a later directory wins (the
seeds' rule). Every shadowed skill is reported by :meth:`SkillManager.list_conflicts` and
logged once; a folder that cannot be read as a skill is skipped and listed in
:attr:`SkillManager.diagnostics`. Reads are confined to the skill's own folders (no ``..``,
no symlink out), and scripts run only through a sandbox provider.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from lightagent.errors import ConfigurationError, LightAgentError, PolicyError, ValidationError

__all__ = ["LEVELS", "Skill", "SkillConflict", "SkillManager"]

_log = logging.getLogger("lightagent.skills")

#: Precedence levels, lowest first: a skill at a later level shadows one at an earlier level.
LEVELS = ("user", "project", "agent")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: The largest SKILL.md read, in bytes (a skill's body is instructions, not data).
MAX_SKILL_BYTES = 256 * 1024


@dataclass(frozen=True)
class Skill:
    """One discovered skill (the seeds' fields, plus its level, tools and front matter)."""

    name: str
    description: str
    path: str
    instructions: str = ""
    has_scripts: bool = False
    has_references: bool = False
    has_assets: bool = False
    source_directory: str = ""
    #: Higher wins: ``level`` rank * 1000 + the directory's position within its level.
    precedence: int = 0
    level: str = "agent"
    tools: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (the instructions left out)."""
        return {
            "name": self.name,
            "description": self.description,
            "path": self.path,
            "level": self.level,
            "source_directory": self.source_directory,
            "tools": list(self.tools),
            "has_scripts": self.has_scripts,
            "has_references": self.has_references,
            "has_assets": self.has_assets,
        }


@dataclass(frozen=True)
class SkillConflict:
    """A skill name found more than once: which one is used and which are shadowed."""

    name: str
    winner: Skill
    shadowed: tuple[Skill, ...]

    def describe(self) -> str:
        """One line for logs."""
        others = ", ".join(f"{s.path} ({s.level})" for s in self.shadowed)
        return f"skill {self.name!r}: using {self.winner.path} ({self.winner.level}); shadowed: {others}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {
            "name": self.name,
            "winner": self.winner.to_dict(),
            "shadowed": [s.to_dict() for s in self.shadowed],
        }


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        raise LightAgentError(
            "LA-MISSING-EXTRA",
            "reading SKILL.md front matter needs PyYAML, which is not installed",
            hint="pip install 'lightagent-core[skills]'",
        ) from None
    return yaml


def _front_matter(text: str) -> tuple[str | None, str]:
    """``(front matter text or None, body)`` of a SKILL.md."""
    if not text.startswith("---"):
        return None, text
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    return None, text


def _tools(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part for part in re.split(r"[,\s]+", value) if part]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("tools must be a list of tool names")
    return tuple(value)


def _inside(skill_dir: Path, folder: str, relative: str, what: str) -> Path:
    """The file ``relative`` of the skill's ``folder``, refused unless its name stays in the
    folder and its real path (every symlink followed, the folder's own included) stays
    inside the skill's real folder."""
    if not isinstance(relative, str) or not relative or "\x00" in relative:
        raise ValidationError("LA-SKILL-PATH", f"{what} needs a relative file name")
    base = skill_dir / folder
    try:
        target = (base / relative).resolve()
        found = target.is_file()
    except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop
        raise ValidationError(
            "LA-SKILL-PATH",
            f"{what} {relative!r:.80} cannot be opened: {type(exc).__name__}",
            details={"path": relative[:200]},
        ) from None
    root = skill_dir.resolve()
    named = os.path.normpath(relative)
    if (
        os.path.isabs(relative)
        or named.split(os.sep)[0] == ".."
        or not base.resolve().is_relative_to(root)
        or not target.is_relative_to(root)
    ):
        raise PolicyError(
            "LA-SKILL-PATH",
            f"{relative!r} is outside the skill's {folder}/ folder",
            details={"path": relative},
        )
    if not found:
        raise ValidationError(
            "LA-SKILL-NOT-FOUND", f"{what} {relative!r} does not exist", details={"path": relative}
        )
    return target


def file_digest(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


class SkillManager:
    """Finds skills in directories by precedence and reads them (the seeds' ``SkillManager``).

    ``skills_directories`` are the agent's own (the highest level); ``project_directories``
    and ``user_directories`` rank below them. Discovery runs on first use when
    ``auto_discover`` is on, else at :meth:`discover_skills`; call it again to pick up
    changes. ``sandbox`` (a :class:`~lightagent_skills.sandbox.SandboxProvider`) is what
    :meth:`execute_script` runs scripts through; without one, scripts never run.
    """

    def __init__(
        self,
        skills_directories: Iterable[str | Path] | None = ("skills",),
        *,
        project_directories: Iterable[str | Path] = (),
        user_directories: Iterable[str | Path] = (),
        logger: logging.Logger | None = None,
        sandbox: Any = None,
        auto_discover: bool = True,
        max_chars: int = 100_000,
    ) -> None:
        if isinstance(skills_directories, (str, Path)):
            skills_directories = [skills_directories]
        self.directories: dict[str, list[Path]] = {
            "user": [Path(d) for d in user_directories],
            "project": [Path(d) for d in project_directories],
            "agent": [Path(d) for d in (skills_directories or ())],
        }
        self.logger = logger or _log
        self.sandbox = sandbox
        self.auto_discover = bool(auto_discover)
        self.max_chars = max_chars
        #: Folders skipped at the last discovery, and why (``{path, reason}``).
        self.diagnostics: list[dict[str, str]] = []
        self._skills: dict[str, Skill] | None = None
        self._conflicts: list[SkillConflict] = []
        self._warned: set[str] = set()
        self._xml: str | None = None
        self._lock = threading.Lock()

    @property
    def skills_directories(self) -> list[str]:
        """The agent-level directories, as given (the seeds' attribute)."""
        return [str(d) for d in self.directories["agent"]]

    # -- discovery --------------------------------------------------------------------------
    def discover_skills(self) -> list[Skill]:
        """Scan every directory now; returns the skills in use (sorted by name)."""
        found: dict[str, list[Skill]] = {}
        diagnostics: list[dict[str, str]] = []
        for rank, level in enumerate(LEVELS):
            for position, directory in enumerate(self.directories[level]):
                if not directory.is_dir():
                    if directory.exists():
                        diagnostics.append({"path": str(directory), "reason": "not a directory"})
                    continue
                for folder in sorted(p for p in directory.iterdir() if p.is_dir()):
                    skill = self._read(
                        folder, directory, level, rank * 1000 + position, diagnostics
                    )
                    if skill is not None:
                        found.setdefault(skill.name, []).append(skill)
        skills: dict[str, Skill] = {}
        conflicts = []
        for name, candidates in sorted(found.items()):
            ordered = sorted(candidates, key=lambda s: s.precedence, reverse=True)
            skills[name] = ordered[0]
            if len(ordered) > 1:
                conflicts.append(SkillConflict(name, ordered[0], tuple(ordered[1:])))
        with self._lock:
            self._skills, self._conflicts, self.diagnostics = skills, conflicts, diagnostics
            self._xml = None
        for conflict in conflicts:
            text = conflict.describe()
            if text not in self._warned:
                self._warned.add(text)
                self.logger.warning("skill conflict: %s", text)
        for item in diagnostics:
            self.logger.warning("skill skipped: %s: %s", item["path"], item["reason"])
        return list(skills.values())

    def _read(
        self,
        folder: Path,
        directory: Path,
        level: str,
        precedence: int,
        diagnostics: list[dict[str, str]],
    ) -> Skill | None:
        marker = folder / "SKILL.md"
        if not marker.is_file():
            return None
        try:
            if not marker.resolve().is_relative_to(folder.resolve()):
                raise ValueError("SKILL.md is a link that leads outside the skill's folder")
            if marker.stat().st_size > MAX_SKILL_BYTES:
                raise ValueError(f"SKILL.md is larger than {MAX_SKILL_BYTES} bytes")
            head, body = _front_matter(marker.read_text(encoding="utf-8"))
            if head is None:
                raise ValueError("SKILL.md has no front matter (--- name/description ---)")
            meta = _yaml().safe_load(head) or {}
            if not isinstance(meta, dict):
                raise ValueError("the front matter is not a mapping")
            name = meta.get("name", folder.name)
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise ValueError(f"invalid skill name {name!r}")
            description = meta.get("description")
            if not isinstance(description, str) or not description.strip():
                raise ValueError("the front matter has no description")
            tools = _tools(meta.get("tools", meta.get("allowed-tools")))
        except LightAgentError:
            raise
        except Exception as exc:  # YAML errors, unreadable files, bad fields
            diagnostics.append({"path": str(marker), "reason": f"{type(exc).__name__}: {exc}"})
            return None
        extra = {
            k: v
            for k, v in meta.items()
            if k not in ("name", "description", "tools", "allowed-tools")
        }
        return Skill(
            name=name,
            description=" ".join(description.split())[:1024],
            path=str(folder),
            instructions=body.strip(),
            has_scripts=(folder / "scripts").is_dir(),
            has_references=(folder / "references").is_dir(),
            has_assets=(folder / "assets").is_dir(),
            source_directory=str(directory),
            precedence=precedence,
            level=level,
            tools=tools,
            metadata=extra,
        )

    @property
    def skills(self) -> dict[str, Skill]:
        """The skills in use by name (discovered on first access when ``auto_discover``)."""
        if self._skills is None:
            if not self.auto_discover:
                return {}
            self.discover_skills()
        return dict(self._skills or {})

    def list_conflicts(self) -> list[SkillConflict]:
        """Every skill name found more than once at the last discovery."""
        return list(self._conflicts)

    def get_skill(self, name: str) -> Skill:
        """The skill called ``name`` (``LA-SKILL-NOT-FOUND`` when there is none)."""
        skill = self.skills.get(name) if isinstance(name, str) else None
        if skill is None:
            raise ValidationError(
                "LA-SKILL-NOT-FOUND",
                f"no skill named {name!r}",
                hint="list_skills names the skills available.",
                details={"skill": name, "available": sorted(self.skills)},
            )
        return skill

    # -- reading ----------------------------------------------------------------------------
    def list_skills(self) -> list[dict[str, Any]]:
        """``[{name, description, level}]`` of the skills in use."""
        return [
            {"name": s.name, "description": s.description, "level": s.level}
            for s in self.skills.values()
        ]

    def activate_skill(self, name: str) -> str:
        """The skill's instructions (its SKILL.md body)."""
        return self.get_skill(name).instructions[: self.max_chars]

    def files(self, name: str, folder: str) -> list[str]:
        """The files under the skill's ``folder`` (``references``, ``assets``, ``scripts``)."""
        skill_dir = Path(self.get_skill(name).path)
        base, root = skill_dir / folder, skill_dir.resolve()
        if not base.is_dir() or not base.resolve().is_relative_to(root):
            return []
        return sorted(
            str(p.relative_to(base))
            for p in base.rglob("*")
            if p.is_file() and p.resolve().is_relative_to(root)
        )

    def read_reference(self, name: str, reference: str) -> str:
        """A text file of the skill's ``references/`` folder (at most ``max_chars``)."""
        path = _inside(Path(self.get_skill(name).path), "references", reference, "reference")
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(self.max_chars)

    def read_asset(self, name: str, asset: str) -> bytes:
        """A file of the skill's ``assets/`` folder, as bytes."""
        return _inside(Path(self.get_skill(name).path), "assets", asset, "asset").read_bytes()

    def script_path(self, name: str, script: str) -> Path:
        """The path of a script of the skill's ``scripts/`` folder (checked, not run)."""
        return _inside(Path(self.get_skill(name).path), "scripts", script, "script")

    def execute_script(
        self, name: str, script: str, args: Sequence[str] = (), *, timeout: float = 30.0
    ) -> Any:
        """Run a script of the skill through the sandbox provider (``LA-SANDBOX`` without one).

        This is for your own code; the model reaches scripts only through
        :class:`~lightagent_skills.toolset.SkillToolset`, which also asks for approval.
        """
        if self.sandbox is None:
            raise PolicyError(
                "LA-SANDBOX",
                "skill scripts run only through a sandbox provider, and none is configured",
                hint="Pass SkillManager(sandbox=...) / LightAgent(sandbox=...) (docs/skills.md).",
            )
        from lightagent_skills.sandbox import run_in_sandbox

        path = self.script_path(name, script)
        skill_dir = Path(self.get_skill(name).path)
        return run_in_sandbox(self.sandbox, path, list(args), skill_dir, timeout)

    def get_skills_xml(self) -> str:
        """The ``<available_skills>`` block for the system prompt (names and descriptions)."""
        xml = self._xml
        if xml is None:
            parts = ["<available_skills>"]
            for skill in self.skills.values():
                parts.append(
                    f"<skill><name>{escape(skill.name)}</name>"
                    f"<description>{escape(skill.description)}</description></skill>"
                )
            parts.append("</available_skills>")
            parts.append(
                "To use a skill, call activate_skill with its name first and follow its "
                "instructions; read_skill_reference reads the files they point to."
            )
            xml = self._xml = "\n".join(parts)
        return xml

    def __repr__(self) -> str:
        dirs = {level: [str(d) for d in ds] for level, ds in self.directories.items() if ds}
        return f"SkillManager({dirs})"


def as_manager(value: Any, *, sandbox: Any, auto_discover: bool) -> SkillManager:
    """``skills_directories=`` as a manager: a ``SkillManager``, or directories for the agent level."""
    if isinstance(value, SkillManager):
        if sandbox is not None and value.sandbox is None:
            value.sandbox = sandbox
        return value
    if isinstance(value, (str, Path)):
        value = [value]
    try:
        directories = [Path(d) for d in value]
    except TypeError:
        raise ConfigurationError(
            "LA-CONFIG",
            f"skills_directories= must be a list of directories or a SkillManager, got {type(value).__name__}",
        ) from None
    return SkillManager(directories, sandbox=sandbox, auto_discover=auto_discover)
