"""The ``Toolset`` seam: a source of tools with a lifecycle, a namespace and change notification.

``@tool`` functions are one toolset (:class:`~lightagent.toolsets.function.FunctionToolset`);
MCP servers, retrieval, skills and connectors are others. The loop asks an agent's
toolsets for their tools before each model request (cached until one reports a change)
and routes each call to the toolset that listed the tool.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from lightagent.utf8 import utf8

__all__ = [
    "BaseToolset",
    "ToolCallContext",
    "ToolDefinition",
    "ToolResult",
    "Toolset",
    "is_toolset",
]


@dataclass(frozen=True)
class ToolDefinition:
    """One tool a toolset offers: its JSON schema is kept whole (``$defs``, ``items``, ``enum`` …).

    ``untrusted_output`` marks output that enters the conversation as data from outside
    (MCP servers, web pages): screens for tool output apply to it.
    """

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    untrusted_output: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def definition_hash(self) -> str:
        """``sha256:<hex>`` of the definition the model sees (name, description, schemas)."""
        body = json.dumps(
            {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
                "output_schema": self.output_schema,
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            default=str,
        )
        return "sha256:" + hashlib.sha256(utf8(body)).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form (with the hash)."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "output_schema": self.output_schema,
            "title": self.title,
            "untrusted_output": self.untrusted_output,
            "metadata": dict(self.metadata),
            "definition_hash": self.definition_hash,
        }


@dataclass(frozen=True)
class ToolCallContext:
    """Who a tool call acts for and how it can be stopped: handed to ``Toolset.call_tool``."""

    run_id: str | None = None
    trace_id: str | None = None
    agent_name: str | None = None
    user_id: str | None = None
    tenant_id: str | None = None
    session_id: str | None = None
    #: The run's ``CancellationToken`` (``.cancelled``, ``.reason``), or None.
    cancellation: Any = None
    #: Stable across retries and resumes of the same call: use it to deduplicate side effects.
    idempotency_key: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: The run's ``approval_id`` (a toolset that asks for approvals reuses a decided one).
    approval_id: str | None = None
    #: Who the run acts for, as a session records it: ``user_id``, and the ``tenant_id`` and
    #: ``project_id`` of the agent's security context (None outside a run).
    owner: dict[str, str] | None = None
    #: ``emit(type, data)`` adds an event to the run's trace and observers, from any thread
    #: (None outside a run); e.g. the progress a long call reports.
    emit: Callable[[str, dict[str, Any]], None] | None = None

    @classmethod
    def from_run(cls, run: Any, *, idempotency_key: str | None = None) -> ToolCallContext:
        """The context of a call made by the run ``run`` (a ``RunContext``; None gives an empty one)."""
        if run is None:
            return cls(idempotency_key=idempotency_key)
        metadata = getattr(run, "metadata", None) or {}
        tenant = getattr(run, "tenant_id", None) or metadata.get("tenant_id")
        return cls(
            run_id=getattr(run, "run_id", None),
            trace_id=getattr(run, "trace_id", None),
            agent_name=getattr(run, "agent_name", None),
            user_id=getattr(run, "user_id", None),
            tenant_id=tenant,
            session_id=getattr(run, "session_id", None),
            cancellation=getattr(run, "cancellation", None),
            idempotency_key=idempotency_key,
            metadata={k: v for k, v in metadata.items() if not k.startswith("_")},
            approval_id=getattr(run, "approval_id", None),
            owner=getattr(run, "owner", None),
            emit=_RunEvents.of(run),
        )


class _RunEvents:
    """``run.emit`` callable from any thread: the event is emitted on the loop that made the
    call (the run's own, so events stay in order with the run's); an emit that raised is kept
    in ``failure`` for the caller to raise after the call."""

    __slots__ = ("_emit", "_loop", "failure")

    def __init__(self, emit: Callable[[str, dict[str, Any]], Any], loop: Any) -> None:
        self._emit, self._loop = emit, loop
        self.failure: Exception | None = None

    @classmethod
    def of(cls, run: Any) -> _RunEvents | None:
        emit = getattr(run, "emit", None)
        if not callable(emit):
            return None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        return cls(emit, loop)

    def __call__(self, type: str, data: dict[str, Any]) -> None:
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if self._loop is None or here is self._loop:
            self._deliver(type, data)
            return
        try:
            self._loop.call_soon_threadsafe(self._deliver, type, data)
        except RuntimeError:  # the run's loop is closed: the run is over
            pass

    def _deliver(self, type: str, data: dict[str, Any]) -> None:
        try:
            self._emit(type, data)
        except Exception as exc:
            if self.failure is None:
                self.failure = exc


@dataclass
class ToolResult:
    """What ``call_tool`` may return when plain text is not enough.

    ``content`` is what the model reads (text, or JSON-able data); ``structured`` is the
    tool's structured output (kept for callers and events); ``is_error`` makes the call a
    typed ``LA-TOOL`` failure whose text the model reads.
    """

    content: Any = None
    structured: dict[str, Any] | None = None
    is_error: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Toolset(Protocol):
    """A source of tools. ``list_tools`` and ``call_tool`` may be sync or async.

    Optional members the kernel uses when present:

    * ``namespace`` (str): prefix for ``<namespace>__<tool>`` names on a collision (or always,
      with ``namespace_tools = True``);
    * ``version`` (int): bumped when the tool list changes; and/or ``subscribe(callback)`` /
      ``unsubscribe(callback)``: the callback is called (no arguments) on a change;
    * ``loop_bound`` (bool): whether the toolset holds resources bound to the event loop
      that entered it (connections, subprocess pipes). Loop-bound toolsets are entered,
      called and exited on one owner task of the process's background loop, so they
      work from sync code and from any event loop. Without the attribute, a toolset whose
      class defines ``__aenter__`` is taken as loop-bound.
    """

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc_info: Any) -> Any: ...

    def list_tools(self) -> Any:
        """``Sequence[ToolDefinition]`` (or an awaitable of it)."""
        ...

    def call_tool(self, name: str, arguments: dict[str, Any], context: ToolCallContext) -> Any:
        """Run tool ``name`` (as listed, before any namespace prefix); may return an awaitable."""
        ...


def is_toolset(obj: Any) -> bool:
    """Whether ``obj`` is a toolset (has ``list_tools`` and ``call_tool``), not a single tool."""
    return (
        not isinstance(obj, type)
        and callable(getattr(obj, "list_tools", None))
        and callable(getattr(obj, "call_tool", None))
    )


class BaseToolset:
    """A convenient base: a no-op lifecycle, a namespace, and change notification.

    Subclasses implement ``list_tools`` and ``call_tool`` and call :meth:`notify_changed`
    when their tool list changes. Override ``__aenter__``/``__aexit__`` to open and close
    resources; the kernel then treats the toolset as loop-bound (see :class:`Toolset`).
    """

    namespace: str | None = None
    namespace_tools: bool = False
    #: Bumped by :meth:`notify_changed`.
    version: int = 0

    def __init__(
        self, *, namespace: str | None = None, namespace_tools: bool | None = None
    ) -> None:
        if namespace is not None:
            self.namespace = namespace
        if namespace_tools is not None:
            self.namespace_tools = namespace_tools

    def _listener_list(self) -> list[Callable[[], Any]]:
        listeners = self.__dict__.get("_listeners")
        if listeners is None:
            listeners = self.__dict__["_listeners"] = []
        return listeners

    async def __aenter__(self) -> BaseToolset:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        return None

    def list_tools(self) -> Sequence[ToolDefinition] | Any:
        """The tools this toolset offers now."""
        raise NotImplementedError

    def call_tool(self, name: str, arguments: dict[str, Any], context: ToolCallContext) -> Any:
        """Run one tool."""
        raise NotImplementedError

    def subscribe(self, callback: Callable[[], Any]) -> None:
        """Call ``callback()`` whenever the tool list changes."""
        listeners = self._listener_list()
        if callback not in listeners:
            listeners.append(callback)

    def unsubscribe(self, callback: Callable[[], Any]) -> None:
        """Stop calling ``callback``."""
        listeners = self._listener_list()
        if callback in listeners:
            listeners.remove(callback)

    def notify_changed(self) -> None:
        """Bump :attr:`version` and tell subscribers the tool list changed."""
        self.version = self.version + 1
        for callback in tuple(self._listener_list()):
            try:
                callback()
            except Exception:  # a listener's failure must not break the toolset
                pass
