"""``SubagentToolset``: one tool, ``delegate(agent_id, task)``, through which a model hands a
task to a registered subagent.

The call goes through :meth:`SubagentManager.run`, so every limit holds (a busy manager
queues it, a closed subagent is a tool error the model reads), the subagent's trace
links to the calling run's (``parent_run_id``/``parent_trace_id``), and the call's own
idempotency key makes a resumed parent run read the recorded result instead of running
the subagent again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lightagent.errors import LightAgentError
from lightagent.toolsets.protocol import BaseToolset, ToolCallContext, ToolDefinition, ToolResult

from lightagent_runtime.subagents.manager import SubagentManager

__all__ = ["SubagentToolset"]


class SubagentToolset(BaseToolset):
    """Offers ``delegate`` over ``manager``'s subagents (``agents`` limits which; all by default)."""

    loop_bound = False

    def __init__(
        self,
        manager: SubagentManager,
        *,
        name: str = "delegate",
        agents: Sequence[str] | None = None,
        namespace: str = "subagents",
    ) -> None:
        super().__init__(namespace=namespace)
        if not isinstance(manager, SubagentManager):
            from lightagent.errors import ConfigurationError

            raise ConfigurationError(
                "LA-CONFIG",
                f"SubagentToolset needs a SubagentManager, got {type(manager).__name__}",
            )
        self.manager = manager
        self.name = name
        self.agents = tuple(agents) if agents is not None else None

    def _choices(self) -> list[str]:
        ids = [r.agent_id for r in self.manager.list() if not r.closed]
        return [i for i in ids if self.agents is None or i in self.agents]

    def list_tools(self) -> list[ToolDefinition]:
        """The ``delegate`` tool, its ``agent_id`` an enum of the open subagents."""
        choices = self._choices()
        described = "; ".join(
            f"{r.agent_id}: {r.metadata.get('description') or r.name}"
            for r in self.manager.list()
            if r.agent_id in choices
        )
        agent_schema: dict[str, Any] = {"type": "string", "description": "The subagent to run."}
        if choices:
            agent_schema["enum"] = choices
        return [
            ToolDefinition(
                name=self.name,
                description=(
                    "Hand a self-contained task to a subagent and get its answer. "
                    f"Subagents: {described or 'none registered'}."
                ),
                parameters={
                    "type": "object",
                    "properties": {
                        "agent_id": agent_schema,
                        "task": {"type": "string", "description": "What the subagent should do."},
                    },
                    "required": ["agent_id", "task"],
                },
            )
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: ToolCallContext
    ) -> ToolResult:
        """Run the subagent; its answer (or its typed error) is what the model reads."""
        agent_id = str(arguments.get("agent_id") or "")
        if self.agents is not None and agent_id not in self.agents:
            return ToolResult(
                content=f"[LA-SUBAGENT-UNKNOWN] {agent_id!r} is not offered here", is_error=True
            )
        try:
            result = await self.manager.run(
                agent_id,
                str(arguments.get("task") or ""),
                cancellation_token=context.cancellation,
                idempotency_key=context.idempotency_key,
                parent_run_id=context.run_id,
                parent_trace_id=context.trace_id,
            )
        except LightAgentError as exc:
            return ToolResult(content=f"[{exc.code}] {exc.message}", is_error=True)
        structured = result.to_dict()
        if not result.success:
            error = result.error or {}
            text = f"[{error.get('code', 'LA-UNKNOWN')}] {error.get('message', result.status)}"
            return ToolResult(content=text, structured=structured, is_error=True)
        return ToolResult(
            content=result.content or "",
            structured=structured,
            metadata={"subagent": json.loads(json.dumps(structured, default=str))},
        )
