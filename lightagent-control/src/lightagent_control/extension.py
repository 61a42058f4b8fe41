"""How the control plane reaches ``LightAgent``: its keywords, its attributes and its interceptor.

:class:`ControlExtension` claims ``hooks=``, ``input_guardrails=``, ``tool_guardrails=``,
``output_guardrails=``, ``policy_engine=``, ``capability_registry=``, ``approval=`` and
``security_context=``, and the attributes ``hooks``, ``guardrails``,
``capability_registry`` and ``invoke_capability``. Its part builds the agent's :class:`ControlInterceptor` and sets
it as ``agent.interceptor``, the kernel's seam; an agent given none of them keeps no
interceptor, so its runs stay on the loop's fast path.
"""

from __future__ import annotations

import threading
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.extensions import AgentExtension, ExtensionPart

from lightagent_control.hook_manager import HookManager
from lightagent_control.interceptor import ControlInterceptor, build_interceptor

__all__ = ["ControlExtension", "ControlPart"]


class ControlPart(ExtensionPart):
    """An agent's control plane: the interceptor its runs consult, and the seeds' views of it."""

    def __init__(self, agent: Any, values: dict[str, Any]) -> None:
        self._agent = agent
        self._lock = threading.Lock()
        given = {k: v for k, v in values.items() if v is not None}
        if given:
            agent.interceptor = build_interceptor(**given)

    @property
    def hooks(self) -> HookManager:
        """The :class:`HookManager` runs consult (``agent.hooks.hooks.append(h)``).

        Hooks appended here take effect from the next run. On an agent without controls the
        interceptor made here is idle, and runs skip it, until it holds a hook.
        """
        interceptor = self._agent.interceptor
        manager = getattr(interceptor, "hooks", None)
        if isinstance(manager, HookManager):
            return manager
        with self._lock:
            if self._agent.interceptor is None:
                self._agent.interceptor = ControlInterceptor(hooks=HookManager())
            return self._agent.interceptor.hooks  # type: ignore[no-any-return]

    @property
    def guardrails(self) -> Any:
        """The interceptor's guardrails (None: the agent has no controls)."""
        return getattr(self._agent.interceptor, "guardrails", None)

    @property
    def capability_registry(self) -> Any:
        """The ``CapabilityRegistry`` given as ``capability_registry=`` (or None)."""
        return getattr(self._agent.interceptor, "capability_registry", None)

    async def invoke_capability(self, capability: str, **arguments: Any) -> Any:
        """Call ``capability`` through the agent's ``CapabilityRegistry`` (policy and approval apply)."""
        registry = self.capability_registry
        if registry is None:
            raise ConfigurationError(
                "LA-CONFIG",
                "this agent has no capability registry",
                hint="Pass capability_registry=CapabilityRegistry(...) to LightAgent().",
            )
        return await registry.invoke(capability, arguments)


class ControlExtension(AgentExtension):
    """The control plane's claim on ``LightAgent`` (docs/security.md, docs/hooks.md)."""

    name = "control"
    keywords = {
        "hooks": None,
        "input_guardrails": None,
        "tool_guardrails": None,
        "output_guardrails": None,
        "policy_engine": None,
        "capability_registry": None,
        "approval": None,
        "security_context": None,
    }
    attributes = ("hooks", "guardrails", "capability_registry", "invoke_capability")
    #: First: other parts read ``agent.interceptor`` when they are configured.
    order = -100

    def configure(self, agent: Any, values: dict[str, Any]) -> ControlPart:
        """The agent's part; a bad hook, guardrail or policy fails ``LightAgent(...)`` here."""
        return ControlPart(agent, values)
