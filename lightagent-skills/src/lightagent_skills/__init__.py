"""lightagent-skills: skills, AGENTS.md project instructions and the sandboxed tool generator.

Skills are folders with a ``SKILL.md`` (``LightAgent(skills_directories=[...])``), project
instructions are the ``AGENTS.md`` files from the repository root down to a directory
(``project_instructions=True``), and the tool generator (``agent.create_tool``) has the
model write a tool that is scanned, quarantined and reviewed before it runs, in the
agent's ``sandbox=`` provider. The :mod:`lightagent_skills.toolgen` subpackage holds the
generator's scan and quarantine.
"""

from __future__ import annotations

from lightagent.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "FileSystem": "lightagent_skills.filesystem",
    "InstructionFile": "lightagent_skills.instructions",
    "PythonSandboxToolset": "lightagent_skills.sandbox",
    "SandboxProvider": "lightagent_skills.sandbox",
    "ScriptResult": "lightagent_skills.sandbox",
    "Skill": "lightagent_skills.manager",
    "SkillConflict": "lightagent_skills.manager",
    "SkillManager": "lightagent_skills.manager",
    "SkillProviderAdapter": "lightagent_skills.providers",
    "ToolProviderAdapter": "lightagent_skills.providers",
    "SkillToolset": "lightagent_skills.toolset",
    "ToolFolderMethods": "lightagent_skills.tool_folder",
    "ToolLoader": "lightagent_skills.loader",
    "SkillsExtension": "lightagent_skills.extension",
    "SkillsPart": "lightagent_skills.part",
    "discover_project_instructions": "lightagent_skills.instructions",
    "execute_python_code": "lightagent_skills.python_exec",
    "execute_python_code_stream": "lightagent_skills.python_exec",
    "execute_python_file": "lightagent_skills.python_exec",
    "find_project_instructions": "lightagent_skills.instructions",
    "BUILTIN_TOOLS": "lightagent_skills.expression",
    "SafeExpressionError": "lightagent_skills.expression",
    "default_registry": "lightagent_skills.expression",
    "evaluate_safe_expression": "lightagent_skills.expression",
    "safe_expression": "lightagent_skills.expression",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
