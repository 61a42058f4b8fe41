"""``SkillToolset``: the model's way into skills (the ``skill.*`` capabilities as tools).

Tools (the seeds' names): ``list_skills`` (``skill.list``), ``activate_skill``
(``skill.activate``: the instructions, and the files they may point to),
``read_skill_reference`` (``skill.read_reference``) and — only with a sandbox provider and
an approval path — ``execute_skill_script`` (``skill.execute_script``). Without either,
the script tool is simply not offered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lightagent.errors import ToolError
from lightagent.toolsets.protocol import BaseToolset, ToolCallContext, ToolDefinition

from lightagent_skills.manager import SkillManager, file_digest
from lightagent_skills.sandbox import approval_hook, approve_execution, arun_in_sandbox

__all__ = ["SkillToolset"]


def _schema(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(k for k in properties if k != "args"),
        "additionalProperties": False,
    }


_NAME = {"type": "string", "description": "The skill's name, as list_skills gives it."}
_DEFINITIONS = {
    "list_skills": ToolDefinition(
        name="list_skills",
        description="List the skills available (name, description).",
        parameters=_schema({}),
        metadata={"capability": "skill.list"},
    ),
    "activate_skill": ToolDefinition(
        name="activate_skill",
        description="Load a skill's instructions; follow them to do the task the skill is for.",
        parameters=_schema({"name": _NAME}),
        metadata={"capability": "skill.activate"},
    ),
    "read_skill_reference": ToolDefinition(
        name="read_skill_reference",
        description="Read a file from a skill's references/ folder (named in its instructions).",
        parameters=_schema(
            {"skill": _NAME, "reference": {"type": "string", "description": "e.g. forms.md"}}
        ),
        metadata={"capability": "skill.read_reference"},
    ),
    "execute_skill_script": ToolDefinition(
        name="execute_skill_script",
        description=(
            "Run a script from a skill's scripts/ folder in a sandbox, after a reviewer approves it."
        ),
        parameters=_schema(
            {
                "skill": _NAME,
                "script": {"type": "string", "description": "e.g. extract.py"},
                "args": {"type": "array", "items": {"type": "string"}},
            }
        ),
        metadata={
            "capability": "skill.execute_script",
            "requires_sandbox": True,
            "requires_approval": True,
        },
    ),
}


class SkillToolset(BaseToolset):
    """The skills of a :class:`SkillManager` as tools.

    ``sandbox`` (defaults to the manager's) and ``approval`` (a ``HumanApprovalHook``, a
    review store or a reviewer callable) together enable ``execute_skill_script``; every
    script run is then approved for that script's bytes and those arguments.
    """

    namespace = "skills"
    loop_bound = False

    def __init__(
        self,
        manager: SkillManager,
        *,
        sandbox: Any = None,
        approval: Any = None,
        script_timeout: float = 30.0,
    ) -> None:
        super().__init__()
        self.manager = manager
        self.sandbox = sandbox if sandbox is not None else manager.sandbox
        self.approval = approval_hook(approval)
        self.script_timeout = script_timeout

    @property
    def runs_scripts(self) -> bool:
        """Whether ``execute_skill_script`` is offered (a sandbox and an approval path)."""
        return self.sandbox is not None and self.approval is not None

    def list_tools(self) -> list[ToolDefinition]:
        """The skill tools (the script tool only when scripts can run safely)."""
        names = ["list_skills", "activate_skill", "read_skill_reference"]
        if self.runs_scripts:
            names.append("execute_skill_script")
        return [_DEFINITIONS[n] for n in names]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: ToolCallContext
    ) -> str:
        """Run one skill tool."""
        manager = self.manager
        if name == "list_skills":
            return json.dumps(manager.list_skills(), ensure_ascii=False)
        if name == "activate_skill":
            return self._activation(str(arguments.get("name")))
        if name == "read_skill_reference":
            return manager.read_reference(
                str(arguments.get("skill")), str(arguments.get("reference"))
            )
        if name == "execute_skill_script" and self.runs_scripts:
            return await self._script(arguments, context)
        raise ToolError("LA-TOOL-NOT-FOUND", f"the skills toolset has no tool {name!r}")

    def _activation(self, skill_name: str) -> str:
        manager = self.manager
        skill = manager.get_skill(skill_name)
        parts = [manager.activate_skill(skill_name)]
        references = manager.files(skill_name, "references") if skill.has_references else []
        if references:
            parts.append("References (read_skill_reference): " + ", ".join(references))
        if skill.has_scripts:
            scripts = manager.files(skill_name, "scripts")
            how = (
                "execute_skill_script, after approval"
                if self.runs_scripts
                else "not runnable here: no sandbox is configured"
            )
            parts.append(f"Scripts ({how}): " + ", ".join(scripts))
        if skill.tools:
            parts.append("Tools this skill uses: " + ", ".join(skill.tools))
        return "\n\n".join(parts)

    async def _script(self, arguments: dict[str, Any], context: ToolCallContext) -> str:
        skill_name = str(arguments.get("skill"))
        script = str(arguments.get("script"))
        args = [str(a) for a in arguments.get("args") or ()]
        path = self.manager.script_path(skill_name, script)
        digest = file_digest(path)
        bound = {"skill": skill_name, "script": script, "args": args, "script_digest": digest}
        approved = await approve_execution(
            self.approval, "execute_skill_script", bound, context, f"run {skill_name}/{script}"
        )
        if {k: approved.get(k) for k in ("skill", "script")} != {
            "skill": skill_name,
            "script": script,
        }:
            raise ToolError("LA-SANDBOX", "a reviewer may edit a script's args only; not run")
        if file_digest(path) != digest:  # changed between approval and now
            raise ToolError("LA-SANDBOX", f"{script} changed after it was approved; not run")
        args = [str(a) for a in approved.get("args") or ()]
        skill_dir = Path(self.manager.get_skill(skill_name).path)
        result = await arun_in_sandbox(self.sandbox, path, args, skill_dir, self.script_timeout)
        return result.to_text()
