"""An agent's skills, project instructions (AGENTS.md) and sandboxed code tools.

All opt-in and side-effect free at construction: skills are discovered, and AGENTS.md
files read, on the first run (or when you ask). A run adds the skills' ``<available_skills>``
block and the project instructions to its system prompt, and offers the skill tools as a
toolset layer of its own, so ``run(use_skills=False)`` leaves both out.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from lightagent.errors import ConfigurationError

__all__ = ["SkillMethods"]


class SkillMethods:
    """Mixed into the agent's :class:`~lightagent_skills.part.SkillsPart`:
    ``skills_directories=``, ``project_instructions=``, ``sandbox=``."""

    #: The ``LightAgent`` this part belongs to.
    agent: Any

    def _init_skills(
        self,
        skills_directories: Any,
        auto_discover_skills: bool,
        project_instructions: Any,
        sandbox: Any,
        enable_unsafe_python: bool,
    ) -> None:
        #: The agent's :class:`~lightagent_skills.manager.SkillManager` (None without ``skills_directories``).
        self.skill_manager: Any = None
        if skills_directories is not None:
            from lightagent_skills.manager import as_manager

            self.skill_manager = as_manager(
                skills_directories, sandbox=sandbox, auto_discover=bool(auto_discover_skills)
            )
        if sandbox is not None and not callable(getattr(sandbox, "run_script", None)):
            raise ConfigurationError(
                "LA-CONFIG",
                f"sandbox= needs run_script(script, args, *, skill_dir, timeout), got {type(sandbox).__name__}",
            )
        self.sandbox = sandbox
        if project_instructions is True:
            project_instructions = Path.cwd()
        elif project_instructions is False or project_instructions is None:
            project_instructions = None
        elif not isinstance(project_instructions, (str, Path)):
            raise ConfigurationError(
                "LA-CONFIG",
                "project_instructions= must be True (the working directory) or a directory",
            )
        self._instructions_start = project_instructions
        self._instructions: str | None = None
        self._python = bool(enable_unsafe_python)
        if self._python and (
            sandbox is None or getattr(self.agent.interceptor, "approval", None) is None
        ):
            raise ConfigurationError(
                "LA-CONFIG",
                "enable_unsafe_python=True needs sandbox= and approval=",
                hint="Model-written code runs only in a sandbox provider and after a reviewer "
                "approves each run (docs/skills.md).",
            )
        self._skill_layers: tuple[Any, ...] | None = None
        self._skills_lock = threading.Lock()

    @property
    def project_instructions(self) -> str:
        """The AGENTS.md text runs add to the prompt ("" when off), read on first use."""
        if self._instructions_start is None:
            return ""
        if self._instructions is None:
            from lightagent_skills.instructions import discover_project_instructions

            self._instructions = discover_project_instructions(self._instructions_start)
        return self._instructions

    def reload_project_instructions(self) -> str:
        """Read the AGENTS.md files again (they are read once, on first use)."""
        self._instructions = None
        return self.project_instructions

    def _run_system_prompt(self, prompt: str | None, use_skills: bool) -> str | None:
        """``prompt`` (the run's system prompt so far) plus the project instructions and,
        with ``use_skills``, the skills' ``<available_skills>`` block."""
        instructions = self.project_instructions
        if instructions:
            prompt = f"{prompt}\n\n# Project instructions (AGENTS.md)\n{instructions}"
        manager = self.skill_manager
        if use_skills and manager is not None and manager.skills:
            prompt = f"{prompt}\n\n{manager.get_skills_xml()}"
        return prompt

    def _run_toolsets(self, use_skills: bool) -> tuple[Any, ...]:
        layers = self._skill_layers
        if layers is None:
            with self._skills_lock:
                if self._skill_layers is None:
                    skills, python = self._build_layers()
                    # The layers of a run with skills, then of one without (worked out once).
                    self._skill_layers = (
                        tuple(x for x in (skills, python) if x is not None),
                        () if python is None else (python,),
                    )
                layers = self._skill_layers
        return layers[0] if use_skills else layers[1]

    def _build_layers(self) -> tuple[Any, Any]:
        from lightagent.toolsets.router import ToolsetRouter

        approval = getattr(self.agent.interceptor, "approval", None)
        skills = python = None
        if self.skill_manager is not None:
            from lightagent_skills.toolset import SkillToolset

            skills = ToolsetRouter()
            skills.add(SkillToolset(self.skill_manager, sandbox=self.sandbox, approval=approval))
        if self._python:
            from lightagent_skills.sandbox import PythonSandboxToolset

            python = ToolsetRouter()
            python.add(PythonSandboxToolset(self.sandbox, approval))
        return skills, python
