"""The runtime guide's provider adapters for tools and skills: a ``ToolRegistry`` or a
``SkillManager`` as a capability provider (``CapabilityRegistry.register(adapter)``), so
their work goes through the registry's policy, approvals and audit like any capability.
"""

from __future__ import annotations

from typing import Any

from lightagent_control.capabilities import BaseCapabilityProvider, CapabilityRisk, CapabilitySpec

__all__ = ["SkillProviderAdapter", "ToolProviderAdapter"]


class ToolProviderAdapter(BaseCapabilityProvider):
    """``tool.<name>`` for every tool of ``tool_registry`` when built (a snapshot, as in the
    seeds): risk L2, executes; invoking it dispatches the call with the tool's argument
    checks and returns the tool's text."""

    name = "tools"
    version = "1"

    def __init__(self, tool_registry: Any) -> None:
        from lightagent.tools.dispatch import AsyncToolDispatcher

        self.tool_registry = tool_registry
        self.dispatcher = AsyncToolDispatcher(tool_registry)
        names = list(tool_registry.names())
        specs = [
            CapabilitySpec(
                f"tool.{name}",
                description=getattr(tool_registry.get(name), "description", "") or "",
                execute=True,
                risk=CapabilityRisk.SENSITIVE,
            )
            for name in names
        ]

        def handler(tool: str) -> Any:
            async def call(**arguments: Any) -> str:
                return await self.dispatcher.dispatch(tool, arguments)

            return call

        super().__init__(specs, handlers={f"tool.{n}": handler(n) for n in names})


class SkillProviderAdapter(BaseCapabilityProvider):
    """``skill.list``, ``skill.activate`` and ``skill.read_reference`` (read-only) and
    ``skill.execute_script`` (L2, needs a sandbox and an approval) over a ``SkillManager``."""

    name = "skills"
    version = "1"

    def __init__(self, skill_manager: Any) -> None:
        self.skill_manager = skill_manager
        specs = [
            CapabilitySpec("skill.list", read=True),
            CapabilitySpec("skill.activate", read=True),
            CapabilitySpec("skill.read_reference", read=True),
            CapabilitySpec(
                "skill.execute_script",
                execute=True,
                risk=CapabilityRisk.SENSITIVE,
                requires_sandbox=True,
                requires_approval=True,
            ),
        ]
        handlers = {
            "skill.list": skill_manager.list_skills,
            "skill.activate": skill_manager.activate_skill,
            "skill.read_reference": skill_manager.read_reference,
            "skill.execute_script": skill_manager.execute_script,
        }
        super().__init__(specs, handlers=handlers)
