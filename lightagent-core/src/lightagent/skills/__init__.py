"""Skills (folders with a ``SKILL.md``), project instructions (``AGENTS.md``) and the sandbox seam."""

from __future__ import annotations

from lightagent._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "InstructionFile": "lightagent.skills.instructions",
    "PythonSandboxToolset": "lightagent.skills.sandbox",
    "SandboxProvider": "lightagent.skills.sandbox",
    "ScriptResult": "lightagent.skills.sandbox",
    "Skill": "lightagent.skills.manager",
    "SkillConflict": "lightagent.skills.manager",
    "SkillManager": "lightagent.skills.manager",
    "SkillToolset": "lightagent.skills.toolset",
    "discover_project_instructions": "lightagent.skills.instructions",
    "find_project_instructions": "lightagent.skills.instructions",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
