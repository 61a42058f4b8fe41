"""``SkillsPart``: the skills capability on one agent.

Construction stays free of side effects: skills are discovered, and AGENTS.md files read,
on the first run (or when asked). Each run adds the project instructions and the skills'
``<available_skills>`` block to its system prompt and stacks the skill tools (and, with
``enable_unsafe_python=True``, the sandboxed Python tool) over the agent's toolsets;
``run(use_skills=False)`` leaves the skills' block and tools out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lightagent.extensions import ExtensionPart

from lightagent_skills.agent import SkillMethods
from lightagent_skills.tool_folder import ToolFolderMethods
from lightagent_skills.toolgen.agent import ToolgenMethods

__all__ = ["SkillsPart", "use_skills"]


def use_skills(options: Any) -> bool:
    """The run's ``use_skills`` option (a claimed option: it is in ``options.extensions``)."""
    extensions = getattr(options, "extensions", None) or {}
    return bool(extensions.get("use_skills", True))


class SkillsPart(SkillMethods, ToolgenMethods, ToolFolderMethods, ExtensionPart):
    """What the ``skills`` extension keeps on one agent (the keywords it was built with)."""

    def __init__(
        self,
        agent: Any,
        *,
        skills_directories: Iterable[str] | None = None,
        auto_discover_skills: bool = True,
        project_instructions: Any = False,
        sandbox: Any = None,
        enable_unsafe_python: bool = False,
    ) -> None:
        self.agent = agent
        self._init_skills(
            skills_directories,
            auto_discover_skills,
            project_instructions,
            sandbox,
            enable_unsafe_python,
        )

    def system_prompt(self, prompt: str | None, options: Any) -> str | None:
        """The project instructions and (with ``use_skills``) the skills' block added."""
        return self._run_system_prompt(prompt, use_skills(options))

    def toolsets(self, options: Any) -> tuple[Any, ...]:
        """The skill tools (with ``use_skills``) and the sandboxed Python tool, if enabled."""
        return self._run_toolsets(use_skills(options))
