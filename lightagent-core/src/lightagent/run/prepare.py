"""Turning a run's :class:`RunOptions` into a :class:`RunSpec` (checked, with a fresh :class:`RunContext`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lightagent.errors import ConfigurationError, ValidationError
from lightagent.interceptors import RunContext, global_observers
from lightagent.run.ids import new_id
from lightagent.run.options import check_result_format, positive_int, resolve_tool
from lightagent.run.run_options import RunOptions
from lightagent.run.spec import RunSpec
from lightagent.toolsets.protocol import is_toolset
from lightagent.utf8 import clean_text

__all__ = ["build_spec", "owner_of"]


def build_spec(
    agent: Any,
    query: str | None,
    opts: RunOptions,
    *,
    initial_messages: list[dict[str, Any]] | None = None,
    skip_calls: Mapping[str, str] | None = None,
    run_id: str | None = None,
    call_keys: Mapping[str, str] | None = None,
    toolset_layers: tuple[Any, ...] = (),
    session_binding: Any = None,
) -> RunSpec:
    """Check the run's options and build its :class:`RunSpec` and :class:`RunContext`.

    ``toolset_layers`` are routers stacked over the agent's toolsets for this run only (a
    swarm's transfer tools); ``session_binding`` records the run there instead of in the
    agent's own session store (one log for a swarm's chain).
    """
    tools = opts.tools
    stream = bool(opts.stream)
    max_retry = positive_int("max_retry", opts.max_retry)
    max_iter = opts.max_tool_iterations
    max_iter = (
        max(max_retry, 1) if max_iter is None else positive_int("max_tool_iterations", max_iter)
    )
    user_id = opts.user_id
    history = opts.history
    metadata = opts.metadata
    result_format = opts.result_format
    trace = bool(opts.trace)
    session_id = opts.session_id
    token = opts.cancellation_token
    model_options = opts.model_options or {}
    check_result_format(result_format, stream)
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
    layers: tuple[Any, ...] = ()
    if opts.extensions:  # a capability whose run options this run uses takes part in it
        from lightagent.extensions import agent_extensions

        for extension in agent_extensions().values():
            if any(name in opts.extensions for name in extension.run_options):
                agent.extension_part(extension.name)
    if session_id is not None and (
        session_binding is not None or agent._session_store_spec is not None
    ):
        from lightagent.extensions import follow

        follow(agent, "session")  # e.g. an inbox read at every step boundary
    parts = [p for p in agent._parts.values() if p is not None] if agent._parts else ()
    for part in parts:
        layers = (*layers, *part.toolsets(opts))
    layers = (*layers, *toolset_layers)
    if layers:
        from lightagent.toolsets.stack import ToolsetStack

        toolsets = ToolsetStack(toolsets, *layers)
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
        parent_trace_id=opts.parent_trace_id,
        run_group_id=opts.run_group_id,
        metadata=dict(metadata) if metadata else {},
        record=trace,
        idempotency_key=opts.idempotency_key,
        approval_id=opts.approval_id,
        cancellation=token,
        tenant_id=_tenant(agent, metadata) if agent.interceptor is not None or metadata else None,
        owner=owner_of(agent, user_id),
    )
    if agent._observers:
        ctx.observers.extend(agent._observers)
    instrumentation = global_observers()
    if instrumentation:
        ctx.observers.extend(instrumentation)
    binding = None
    load_history = False
    if session_id is not None and (
        session_binding is not None or agent._session_store_spec is not None
    ):
        binding = session_binding or agent.session_binding
        ctx.observers.append(binding.observer(session_id, rid, owner=ctx.owner))
        load_history = history is None and initial_messages is None

    output = None
    if opts.output_schema is not None:
        from lightagent.structured import output_spec

        output = output_spec(opts.output_schema, model)

    system_prompt: str | None = agent._system_prompt
    for part in parts:
        system_prompt = part.system_prompt(system_prompt, opts)

    spec = RunSpec(
        ctx=ctx,
        model=model,
        registry=registry if len(registry) else None,
        dispatcher=dispatcher,
        system_prompt=system_prompt,
        query=query,
        history=history,
        initial_messages=list(initial_messages) if initial_messages is not None else None,
        skip_calls=dict(skip_calls) if skip_calls else {},
        call_keys=dict(call_keys) if call_keys else {},
        load_history=load_history,
        stream=stream,
        result_format=result_format,
        max_retry=max_retry,
        max_tool_iterations=max_iter,
        interceptor=agent._run_interceptor(),
        output=output,
        binding=binding,
        model_options=model_options,
        toolsets=toolsets,
        base_registry=registry,
    )
    # Only a run that may hold more tools than the threshold looks a selector up (toolsets
    # are listed later, in the loop).
    if agent.filter_tools and (toolsets is not None or len(registry) > spec.filter_threshold):
        from lightagent.tools.selector import tool_selector

        spec.tool_selector = tool_selector()
    if parts:
        steps = [step for step in (p.run_step(spec, opts) for p in parts) if step is not None]
        spec.steps = tuple(sorted(steps, key=_order) if len(steps) > 1 else steps)
    return spec


def _order(step: Any) -> int:
    return int(getattr(step, "order", 0))


def _tenant(agent: Any, metadata: dict[str, Any] | None) -> str | None:
    tenant = getattr(getattr(agent.interceptor, "security_context", None), "tenant_id", None)
    if tenant is None and metadata:
        tenant = metadata.get("tenant_id")
    return None if tenant is None else str(tenant)


def owner_of(agent: Any, user_id: Any) -> dict[str, str]:
    """Who ``agent`` acts for on behalf of ``user_id``: the user, and the tenant and project
    of the agent's ``security_context`` (when it names them)."""
    owner = {"user_id": str(user_id)}
    security = getattr(getattr(agent, "interceptor", None), "security_context", None)
    for key in ("tenant_id", "project_id"):
        value = getattr(security, key, None)
        if value:
            owner[key] = str(value)
    for key, value in owner.items():
        if clean_text(value) != value:  # stored as U+FFFD, two owners would become one
            raise ValidationError(
                "LA-VALIDATION",
                f"{key} holds a lone surrogate, which is not valid text",
                hint="Identities that own a session must be valid UTF-8 text.",
                details={"field": key},
            )
    return owner
