"""The ``skills`` agent extension: what ``LightAgent`` takes from this distribution.

It claims the seeds' keywords ``skills_directories``, ``auto_discover_skills``,
``project_instructions``, ``sandbox`` and ``enable_unsafe_python``, the run option
``use_skills``, and the agent attributes of :class:`~lightagent_skills.part.SkillsPart`
(``agent.skill_manager``, ``agent.create_tool`` …).
"""

from __future__ import annotations

from typing import Any

from lightagent.extensions import AgentExtension, ExtensionPart

__all__ = ["ATTRIBUTES", "SkillsExtension"]

#: The agent attributes (methods and properties) the part provides.
ATTRIBUTES: tuple[str, ...] = (
    "skill_manager",
    "sandbox",
    "project_instructions",
    "reload_project_instructions",
    "create_tool",
    "acreate_tool",
    "register_generated_tool",
    "load_generated_tool",
    "tool_loader",
    "loaded_tools",
    "load_tools",
)


class SkillsExtension(AgentExtension):
    """Skills (``SKILL.md`` folders), AGENTS.md project instructions, sandboxed code tools
    and the tool generator, as one part per agent."""

    name = "skills"
    keywords = {
        "skills_directories": None,
        "auto_discover_skills": True,
        "project_instructions": False,
        "sandbox": None,
        "enable_unsafe_python": False,
    }
    run_options = {"use_skills": True}
    attributes = ATTRIBUTES

    def configure(self, agent: Any, values: dict[str, Any]) -> ExtensionPart:
        """The agent's :class:`~lightagent_skills.part.SkillsPart` (a bad value is ``LA-CONFIG`` here)."""
        from lightagent_skills.part import SkillsPart

        return SkillsPart(agent, **values)
