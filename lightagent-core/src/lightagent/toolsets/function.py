"""The built-in toolset: ``@tool`` functions and seeds ``tool_info`` callables in a ``ToolRegistry``.

An agent's own tools are this toolset. The loop does not go through :meth:`call_tool`
for them (it hands their calls to the dispatcher directly, at no added cost); the class
exists so function tools can be handed around, namespaced and tested like any toolset.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from lightagent.toolsets.protocol import BaseToolset, ToolCallContext, ToolDefinition

__all__ = ["FunctionToolset", "definition_of"]


def definition_of(tool: Any) -> ToolDefinition:
    """The :class:`ToolDefinition` of a ``Tool``."""
    return ToolDefinition(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,
        title=tool.title,
        metadata=dict(tool.metadata),
    )


class FunctionToolset(BaseToolset):
    """Python functions as a toolset: ``FunctionToolset([get_weather, add], namespace="util")``.

    ``tools`` may be ``@tool`` functions, ``Tool`` objects, seeds-style ``tool_info``
    callables or plain typed functions (inferred as with ``@tool``), or a ready
    ``ToolRegistry``. Calls go through the dispatcher: validated, time-limited, typed errors.
    """

    loop_bound = False

    def __init__(
        self,
        tools: Iterable[Any] | Any = (),
        *,
        namespace: str | None = None,
        namespace_tools: bool | None = None,
        timeout: float | None = 60.0,
    ) -> None:
        super().__init__(namespace=namespace, namespace_tools=namespace_tools)
        from lightagent.tools.registry import ToolRegistry

        if isinstance(tools, ToolRegistry):
            self.registry = tools
        else:
            self.registry = ToolRegistry()
            self.registry.register_tools(list(tools), infer=True)
        self._timeout = timeout
        self._dispatcher: Any = None

    @property
    def version(self) -> int:  # type: ignore[override]
        """Follows the registry: registering or removing a tool is a change."""
        return self.registry._version

    def list_tools(self) -> list[ToolDefinition]:
        """A definition per registered tool, in registration order."""
        return [definition_of(t) for t in self.registry.tools()]

    def add(self, tool: Any) -> None:
        """Register one more tool."""
        self.registry.register_tool(tool, infer=True)
        self.notify_changed()

    def notify_changed(self) -> None:
        """Tell subscribers (the version follows the registry by itself)."""
        for callback in tuple(self._listener_list()):
            try:
                callback()
            except Exception:
                pass

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: ToolCallContext
    ) -> str:
        """Run ``name`` through the dispatcher; a failure raises its typed error."""
        from lightagent.models.base import ToolCall
        from lightagent.tools.dispatch import AsyncToolDispatcher

        if self._dispatcher is None:
            self._dispatcher = AsyncToolDispatcher(self.registry, default_timeout=self._timeout)
        call = ToolCall(id="call_toolset", name=name, arguments=json.dumps(arguments or {}))
        keys = {"call_toolset": context.idempotency_key} if context.idempotency_key else None
        outcome = await self._dispatcher.arun_call(
            call, cancellation=context.cancellation, idempotency_keys=keys, context=context
        )
        if outcome.error is not None:
            raise outcome.error
        return outcome.output
