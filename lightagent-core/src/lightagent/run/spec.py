"""``RunSpec``: everything one run needs, built by the agent and read by the state machine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lightagent.interceptors import RunContext

__all__ = ["RunSpec"]


@dataclass(eq=False)
class RunSpec:
    """The inputs of one run. Built per run; the agent never keeps one."""

    ctx: RunContext
    model: Any
    registry: Any = None
    dispatcher: Any = None
    system_prompt: str | None = None
    query: str | None = None
    history: list[dict[str, Any]] | None = None
    #: Start from these messages (resume); their pending tool calls are run first.
    initial_messages: list[dict[str, Any]] | None = None
    #: call_id -> output of calls already executed (resume): they are not run again.
    skip_calls: dict[str, str] = field(default_factory=dict)
    #: call_id -> idempotency key recorded for the pending calls' first attempt (resume).
    call_keys: dict[str, str] = field(default_factory=dict)
    #: Load the history of ``ctx.session_id`` through the session binding.
    load_history: bool = False
    stream: bool = False
    result_format: str = "str"
    max_retry: int = 10
    max_tool_iterations: int = 10
    #: Chooses the tools of each request when the registry holds more than ``filter_threshold``
    #: (a ``lightagent.tools.selector.ToolSelector``); None offers every tool.
    tool_selector: Any = None
    filter_threshold: int = 16
    filter_limit: int = 8
    interceptor: Any = None
    output: Any = None
    binding: Any = None
    model_options: dict[str, Any] = field(default_factory=dict)
    #: The agent's toolsets other than its function tools (a ``ToolsetRouter``), or None.
    toolsets: Any = None
    #: The function-tool registry the toolsets are merged over (``registry`` may be None).
    base_registry: Any = None
    #: Called with the ``RunResult`` when a streamed run ends (the agent's ``get_history``).
    on_result: Any = None
    #: The capabilities' steps in this run (``lightagent.extensions.RunStep``), in order.
    steps: tuple[Any, ...] = ()
    #: Each capability's own state for this run, by extension name (its typed slot).
    extensions: dict[str, Any] = field(default_factory=dict)
