"""Turning ``run()`` options into a :class:`RunSpec` (checked, with a fresh :class:`RunContext`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.interceptors import RunContext, global_observers
from lightagent.run.ids import new_id
from lightagent.run.options import check_result_format, positive_int, refuse_unknown, resolve_tool
from lightagent.run.spec import RunSpec
from lightagent.toolsets.protocol import is_toolset

__all__ = ["RUN_OPTIONS", "build_spec"]

#: The keyword options of ``run``/``arun``/``astream`` and their defaults.
RUN_OPTIONS: dict[str, Any] = {
    "tools": None,
    "stream": False,
    "max_retry": 10,
    "max_tool_iterations": None,
    "user_id": "default_user",
    "history": None,
    "metadata": None,
    "result_format": "str",
    "trace": False,
    "parent_trace_id": None,
    "run_group_id": None,
    "session_id": None,
    "cancellation_token": None,
    "idempotency_key": None,
    "output_schema": None,
    "light_swarm": None,
    "use_skills": True,
    "approval_id": None,
    "model_options": None,
}


def build_spec(
    agent: Any,
    query: str | None,
    kwargs: dict[str, Any],
    *,
    initial_messages: list[dict[str, Any]] | None = None,
    skip_calls: Mapping[str, str] | None = None,
    run_id: str | None = None,
    call_keys: Mapping[str, str] | None = None,
) -> RunSpec:
    """Check ``run()`` options and build the run's :class:`RunSpec` and :class:`RunContext`."""
    tools = kwargs.pop("tools", None)
    stream = bool(kwargs.pop("stream", False))
    max_retry = positive_int("max_retry", kwargs.pop("max_retry", 10))
    max_iter = kwargs.pop("max_tool_iterations", None)
    max_iter = (
        max(max_retry, 1) if max_iter is None else positive_int("max_tool_iterations", max_iter)
    )
    user_id = kwargs.pop("user_id", "default_user")
    history = kwargs.pop("history", None)
    metadata = kwargs.pop("metadata", None)
    result_format = kwargs.pop("result_format", "str")
    trace = bool(kwargs.pop("trace", False))
    parent_trace_id = kwargs.pop("parent_trace_id", None)
    run_group_id = kwargs.pop("run_group_id", None)
    session_id = kwargs.pop("session_id", None)
    token = kwargs.pop("cancellation_token", None)
    idempotency_key = kwargs.pop("idempotency_key", None)
    output_schema = kwargs.pop("output_schema", None)
    light_swarm = kwargs.pop("light_swarm", None)
    kwargs.pop("use_skills", None)  # no skills subsystem in 0.1: nothing to turn on or off
    approval_id = kwargs.pop("approval_id", None)
    model_options = kwargs.pop("model_options", None) or {}
    if kwargs:
        refuse_unknown("run()", kwargs, RUN_OPTIONS)
    check_result_format(result_format, stream)
    if light_swarm is not None:
        raise ConfigurationError(
            "LA-CONFIG",
            "run(light_swarm=...) is not available in lightagent-core 0.1",
            hint="Call the swarm's own run(); handoffs from run() ship in a later version.",
        )
    if query is not None and not isinstance(query, str):
        raise ConfigurationError("LA-CONFIG", f"query must be a str, got {type(query).__name__}")
    if query is None and initial_messages is None:
        raise ConfigurationError("LA-CONFIG", "run() needs a query")
    if initial_messages is not None and query is not None:
        from lightagent.run.machine import pending_tool_calls

        if pending_tool_calls(list(initial_messages))[0]:
            raise ConfigurationError(
                "LA-CONFIG",
                "initial_messages end with tool calls that have no result; a new query cannot follow them",
                hint="Resume without a query first, or add the missing tool results.",
            )
    if history is not None and not isinstance(history, list):
        raise ConfigurationError("LA-CONFIG", "history must be a list of OpenAI chat messages")
    if metadata is not None and not isinstance(metadata, dict):
        raise ConfigurationError("LA-CONFIG", "metadata must be a dict")
    if token is not None and not hasattr(token, "cancelled"):
        raise ConfigurationError("LA-CONFIG", "cancellation_token must be a CancellationToken")

    model = agent.model
    registry = agent.tools
    if tools:
        extra = [t if isinstance(t, str) and t in registry else resolve_tool(t) for t in tools]
        if any(is_toolset(t) for t in extra):
            raise ConfigurationError(
                "LA-CONFIG",
                "run(tools=...) takes functions; toolsets belong to the agent",
                hint="Pass toolsets to LightAgent(tools=[...]) or agent.add_toolset(...).",
            )
        registry = registry.with_tools(extra)
    toolsets = agent._toolsets
    if toolsets is not None and not len(toolsets):
        toolsets = None
    dispatcher = (
        (agent._dispatcher or agent._base_dispatcher())
        if (len(registry) or toolsets is not None)
        else None
    )

    rid = run_id or new_id("run")
    ctx = RunContext(
        run_id=rid,
        trace_id=new_id("trace"),
        agent_name=agent.name,
        user_id=user_id,
        session_id=session_id,
        parent_trace_id=parent_trace_id,
        run_group_id=run_group_id,
        metadata=dict(metadata) if metadata else {},
        record=trace,
        idempotency_key=idempotency_key,
        approval_id=approval_id,
        cancellation=token,
        tenant_id=_tenant(agent, metadata) if agent.interceptor is not None or metadata else None,
    )
    if agent._observers:
        ctx.observers.extend(agent._observers)
    instrumentation = global_observers()
    if instrumentation:
        ctx.observers.extend(instrumentation)
    binding = None
    load_history = False
    if session_id is not None and agent._session_store_spec is not None:
        binding = agent.session_binding
        ctx.observers.append(binding.observer(session_id, rid, owner=_owner(agent, user_id)))
        load_history = history is None and initial_messages is None

    memory = agent.memory if agent._memory_spec is not None else None
    # resolved here so a bad retrieval= configuration fails the run, typed, up front
    retrieval = agent.retrieval if agent._retrieval_spec is not None else None
    memory_filter = None
    if memory is not None:
        memory_filter = agent.memory_filter
        if memory_filter is None:  # no policy given: the default one, which fails closed
            from lightagent.memory.policy import MemoryPolicy

            memory_filter = MemoryPolicy()

    output = None
    if output_schema is not None:
        from lightagent.structured import output_spec

        output = output_spec(output_schema, model)

    return RunSpec(
        ctx=ctx,
        model=model,
        registry=registry if len(registry) else None,
        dispatcher=dispatcher,
        system_prompt=agent._system_prompt,
        query=query,
        history=history,
        initial_messages=list(initial_messages) if initial_messages is not None else None,
        skip_calls=dict(skip_calls or {}),
        call_keys=dict(call_keys or {}),
        load_history=load_history,
        stream=stream,
        result_format=result_format,
        max_retry=max_retry,
        max_tool_iterations=max_iter,
        filter_tools=agent.filter_tools,
        interceptor=agent._run_interceptor(),
        output=output,
        binding=binding,
        model_options=model_options,
        toolsets=toolsets,
        base_registry=registry,
        memory=memory,
        memory_filter=memory_filter,
        self_learning=memory is not None and getattr(agent, "self_learning", False),
        memory_book=getattr(agent, "_memory_book", None) if memory is not None else None,
        retrieval=retrieval if agent.retrieval_inject else None,
        retrieval_inject=agent.retrieval_inject,
    )


def _tenant(agent: Any, metadata: dict[str, Any] | None) -> str | None:
    tenant = getattr(getattr(agent.interceptor, "security_context", None), "tenant_id", None)
    if tenant is None and metadata:
        tenant = metadata.get("tenant_id")
    return None if tenant is None else str(tenant)


def _owner(agent: Any, user_id: str) -> dict[str, str]:
    """Who a session run acts for: the user, and the tenant/project of the agent's context."""
    from lightagent.events.ownership import owner_of

    return owner_of(agent, user_id)
