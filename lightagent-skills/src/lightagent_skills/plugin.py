"""The lightagent plugin of lightagent-skills: the ``skills`` agent extension and the
``safe_expression`` tool.

The extension is a lazy ``"module:attribute"`` reference: loading the plugin imports
nothing until an agent uses a skills keyword (``skills_directories=``, ``sandbox=`` …),
the ``use_skills`` run option or one of the attributes (``agent.create_tool`` …).
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import hookimpl


@hookimpl
def register_agent_extensions(register: Any) -> None:
    """Skills, project instructions, sandboxed code and the tool generator on ``LightAgent``."""
    register("skills", "lightagent_skills.extension:SkillsExtension")


@hookimpl
def register_tools(register: Any) -> None:
    """``safe_expression``, by name: ``LightAgent(tools=["safe_expression"])``."""
    register("safe_expression", "lightagent_skills.expression:safe_expression")
