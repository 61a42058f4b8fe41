"""``LightSwarm``: agents that hand a conversation to each other through tool calls.

Each registered agent gets a ``transfer_to_<agent>`` tool for every other agent, for the
runs the swarm drives only (the agents themselves are not changed). A run that calls one
ends with a handoff (see :mod:`lightagent_swarm.handoff_step`), and the swarm starts the target
with the user's conversation: the history the entry run had, and the handed-off query.
The chain is bounded (``max_handoffs``) and refuses cycles; its runs share one
``run_group_id``, each is a child of the previous one's trace (``parent_trace_id``), and
with ``session_id`` all of them are recorded in one session log.

The chain is written once (:meth:`LightSwarm._chain`, a generator of run specs); the sync,
async and streaming entry points only drive it, and both streams end the same way: each
hop's result goes back to the chain, and one ``done`` event closes the whole chain.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from typing import Any, cast

from lightagent.errors import ConfigurationError
from lightagent.results import RunResult, StreamEvent
from lightagent.run.failure_log import log_failure
from lightagent.run.ids import new_id
from lightagent.run.options import positive_int
from lightagent.run.prepare import build_spec
from lightagent.run.run_options import RunOptions
from lightagent.run.spec import RunSpec
from lightagent.run.streaming import done_event
from lightagent_control.context import SecurityContext

from lightagent_swarm.handoff_step import HandoffStep
from lightagent_swarm.handoffs import HandoffToolset, Route, transfer_tool_name

__all__ = ["LightSwarm", "as_swarm"]

_log = logging.getLogger("lightagent.swarm")

#: Options that only the entry agent's run receives.
_ENTRY_ONLY = ("tools", "history")

Chain = Generator[RunSpec, "RunResult | None", "RunResult | None"]


class LightSwarm:
    """A set of agents that hand conversations to each other (the seeds' ``LightSwarm``).

    ``max_handoffs`` bounds a chain (a further handoff ends it with ``LA-HANDOFF-LIMIT``);
    a handoff back to an agent that already handled the conversation ends it with
    ``LA-HANDOFF-CYCLE`` unless ``allow_cycles=True``. ``session_store`` records every
    run of a chain in one store (default: the entry agent's ``session_store``).
    """

    def __init__(
        self,
        *,
        max_handoffs: int = 5,
        allow_cycles: bool = False,
        session_store: Any = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.max_handoffs = positive_int("max_handoffs", max_handoffs)
        self.allow_cycles = bool(allow_cycles)
        self.agents: dict[str, Any] = {}
        self.logger = logger or _log
        self._session_store_spec = session_store
        self._binding: Any = None
        self._routers: dict[str, Any] = {}
        self._toolsets: dict[str, HandoffToolset] = {}
        self._lock = threading.Lock()

    # -- membership -----------------------------------------------------------------------
    def register_agent(self, *agents: Any) -> None:
        """Add agents by their ``name``; a name already taken is ignored and logged."""
        for agent in agents:
            name = getattr(agent, "name", None)
            if not isinstance(name, str) or not callable(getattr(agent, "run", None)):
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"register_agent needs LightAgent objects, got {type(agent).__name__}",
                )
            with self._lock:
                if name in self.agents:
                    if self.agents[name] is not agent:
                        self.logger.warning(
                            "LightSwarm: an agent named %r is already registered; ignored", name
                        )
                    continue
                tool = transfer_tool_name(name)
                clash = next((n for n in self.agents if transfer_tool_name(n) == tool), None)
                if clash is not None:
                    raise ConfigurationError(
                        "LA-CONFIG",
                        f"agents {clash!r} and {name!r} would share the transfer tool {tool!r}",
                        hint="Give agents names that differ in letters, digits, '_' or '-'.",
                        details={"agents": [clash, name], "tool": tool},
                    )
                self.agents[name] = agent
                toolsets = list(self._toolsets.values())
            for toolset in toolsets:
                toolset.notify_changed()  # the others gain a transfer tool

    def handoff_toolset(self, agent_name: str) -> HandoffToolset:
        """The transfer tools offered to ``agent_name`` in the runs this swarm drives."""
        return self._layer(agent_name)[1]

    def _layer(self, agent_name: str) -> tuple[Any, HandoffToolset]:
        with self._lock:
            router = self._routers.get(agent_name)
            if router is None:
                from lightagent.toolsets.router import ToolsetRouter

                toolset = HandoffToolset(self, agent_name)
                router = ToolsetRouter()
                router.add(toolset)
                self._routers[agent_name] = router
                self._toolsets[agent_name] = toolset
            return router, self._toolsets[agent_name]

    def _session_binding(self, entry: Any) -> Any:
        if self._session_store_spec is None:
            return getattr(entry, "session_binding", None)
        if self._binding is None:
            with self._lock:
                if self._binding is None:
                    from lightagent.events.binding import SessionBinding
                    from lightagent.run.options import resolve_store

                    self._binding = SessionBinding(resolve_store(self._session_store_spec))
        return self._binding

    # -- running ----------------------------------------------------------------------------
    def run(self, agent: Any, query: str, stream: bool = False, **run_kwargs: Any) -> Any:
        """Run ``query`` on ``agent`` (or its name) and follow its handoffs; returns what
        ``agent.run`` would.

        Every run option goes to the entry agent; ``user_id``, ``session_id``,
        ``cancellation_token``, ``metadata``, ``trace``, ``result_format``, the retry and
        iteration limits, ``approval_id`` and ``model_options`` go to each agent of the
        chain too (``tools`` and ``history`` to the entry agent only).
        """
        run_kwargs = _keywords(run_kwargs)
        if stream:
            return self._stream(agent, query, run_kwargs)
        chain = self._chain(agent, query, run_kwargs, stream=False)
        from lightagent.run.sync_driver import drive

        spec = next(chain)
        while True:
            last = spec
            try:
                spec = chain.send(drive(spec))
            except StopIteration as stop:
                return self._formatted(stop.value, last)

    async def arun(self, agent: Any, query: str, stream: bool = False, **run_kwargs: Any) -> Any:
        """Async :meth:`run`; with ``stream=True`` it returns an async iterator."""
        run_kwargs = _keywords(run_kwargs)
        if stream:
            return self._astream(agent, query, run_kwargs)
        chain = self._chain(agent, query, run_kwargs, stream=False)
        from lightagent.run.async_driver import adrive

        spec = next(chain)
        while True:
            last = spec
            try:
                spec = chain.send(await adrive(spec))
            except StopIteration as stop:
                return self._formatted(stop.value, last)

    def astream(self, agent: Any, query: str, **run_kwargs: Any) -> AsyncIterator[Any]:
        """Async iterator over the chain's stream (the target agents' chunks follow on)."""
        run_kwargs = _keywords(run_kwargs)
        run_kwargs.pop("stream", None)
        return self._astream(agent, query, run_kwargs)

    # -- the chain, written once --------------------------------------------------------------
    def _chain(self, entry: Any, query: str, options: dict[str, Any], *, stream: bool) -> Chain:
        """Yield the spec of each hop; receive its result."""
        entry = self._entry(entry)
        options = dict(options)
        options["run_group_id"] = options.get("run_group_id") or new_id("group")
        key = options.get("idempotency_key")
        binding = self._session_binding(entry)
        with self._lock:
            names = list(self.agents)
        route = Route(
            agents=names,
            chain=(entry.name,),
            max_handoffs=self.max_handoffs,
            allow_cycles=self.allow_cycles,
        )
        agent = entry
        hop_query: str | None = query
        hop_options = dict(options)
        results: list[RunResult] = []
        carried: SecurityContext | None = None
        while True:
            hop_options["stream"] = stream
            spec = build_spec(
                agent,
                hop_query,
                RunOptions.of(None, hop_options, where="LightSwarm.run()"),
                toolset_layers=(self._layer(agent.name)[0],),
                session_binding=binding,
            )
            _route(spec, route)
            carried = _narrowed(spec, carried)
            _last_trace(agent, spec, None)
            result = yield spec
            if result is not None:
                _last_trace(agent, spec, result)
                results.append(result)
                log_failure(agent.logger, result)  # the hop's own agent says it failed, once
            handoff = route.taken
            if handoff is None or (result is not None and result.error is not None):
                return _combined(results)
            agent = self.agents[handoff.target_agent]
            route = route.next(handoff)
            hop_query = handoff.query
            hop_options = {k: v for k, v in options.items() if k not in _ENTRY_ONLY}
            hop_options["history"] = list(handoff.history)
            hop_options["parent_trace_id"] = handoff.trace_id
            if key:
                hop_options["idempotency_key"] = f"{key}:hop{route.hops}"

    def _entry(self, agent: Any) -> Any:
        if isinstance(agent, str):
            found = self.agents.get(agent)
            if found is None:
                raise ConfigurationError(
                    "LA-HANDOFF",
                    f"no agent named {agent!r} is registered in this swarm",
                    details={"agents": sorted(self.agents)},
                )
            return found
        if not isinstance(getattr(agent, "name", None), str):
            raise ConfigurationError(
                "LA-CONFIG",
                f"LightSwarm.run needs an agent or its name, got {type(agent).__name__}",
            )
        return agent

    @staticmethod
    def _formatted(result: RunResult | None, spec: RunSpec) -> Any:
        assert result is not None  # a driven (not streamed) hop always returns its result
        fmt = spec.result_format
        if fmt == "str":
            return result.content if result.content is not None else ""
        if fmt == "dict":
            return result.to_dict()
        return result

    def _stream(self, entry: Any, query: str, options: dict[str, Any]) -> Iterator[Any]:
        from lightagent.run.sync_driver import drive_stream

        chain = self._chain(entry, query, options, stream=True)
        spec = next(chain)
        while True:
            ended = _ended(spec)
            items = cast("Generator[Any, None, RunResult]", drive_stream(spec))
            try:
                for item in items:
                    if not _is_done(item):
                        yield item
            finally:
                items.close()
            try:
                spec = chain.send(ended[0] if ended else None)
            except StopIteration as stop:
                yield from _chain_done(spec, stop.value)
                return stop.value

    async def _astream(self, entry: Any, query: str, options: dict[str, Any]) -> AsyncIterator[Any]:
        from lightagent.run.async_driver import adrive_stream

        chain = self._chain(entry, query, options, stream=True)
        spec = next(chain)
        while True:
            ended = _ended(spec)
            items = cast("AsyncGenerator[Any, None]", adrive_stream(spec))
            try:
                async for item in items:
                    if not _is_done(item):
                        yield item
            finally:
                await items.aclose()
            try:
                spec = chain.send(ended[0] if ended else None)
            except StopIteration as stop:
                for item in _chain_done(spec, stop.value):
                    yield item
                return

    def __repr__(self) -> str:
        return f"LightSwarm(agents={list(self.agents)!r}, max_handoffs={self.max_handoffs})"


def _ended(spec: RunSpec) -> list[RunResult]:
    """Where a streamed hop's result lands: the stream drivers hand it to ``spec.on_result``
    (an async generator cannot return it)."""
    ended: list[RunResult] = []
    spec.on_result = ended.append
    return ended


def _is_done(item: Any) -> bool:
    """A hop's ``done`` event: held back, the chain shows one for all its hops at its end."""
    return isinstance(item, StreamEvent) and item.type == "done"


def _chain_done(spec: RunSpec, final: RunResult | None) -> tuple[StreamEvent, ...]:
    """The streamed chain's last item: its combined result as a ``done`` event, when the
    hops stream events (``spec`` is the last hop's)."""
    if final is None or spec.result_format != "event":
        return ()
    return (done_event(final),)


def _route(spec: RunSpec, route: Route) -> None:
    """Make ``spec`` a hop of the chain: its transfer calls end it with a handoff ``route``
    checks (the swarm's step comes first, as the loop asked it before any other)."""
    spec.extensions["swarm"] = route
    spec.steps = (HandoffStep(route), *spec.steps)


def _narrowed(spec: RunSpec, carried: SecurityContext | None) -> SecurityContext | None:
    """Bind a hop to what its source held (a child of ``carried``, within the agent's own
    context too); returns the hop's context, which the next hop inherits."""
    interceptor = spec.interceptor
    own = getattr(interceptor, "security_context", None) or spec.ctx.metadata.get(
        "security_context"
    )
    own = own if isinstance(own, SecurityContext) else None
    if carried is None:
        return own
    context = carried.child(agent_id=spec.ctx.agent_name)
    if own is not None:
        context = context.intersect(own)
    from lightagent.events.binding import SessionRecorder
    from lightagent.run.prepare import owner_of
    from lightagent_control.interceptor import ControlInterceptor, build_interceptor

    if interceptor is None:
        spec.interceptor = build_interceptor(security_context=context)
    elif isinstance(interceptor, ControlInterceptor):
        spec.interceptor = interceptor.bound_to(context)
    else:  # fail closed: an interceptor we cannot bind would let the target widen
        raise ConfigurationError(
            "LA-CONFIG",
            f"agent {spec.ctx.agent_name!r} has an interceptor that cannot carry the "
            "security context of the agent handing off to it",
            hint="Give swarm agents hooks=, guardrails and security_context= instead.",
            details={"interceptor": type(interceptor).__name__},
        )
    # the hop searches and records its session as the tenant it was handed, not its own
    ctx = spec.ctx
    ctx.owner = owner_of(spec, ctx.user_id)
    ctx.tenant_id = context.tenant_id or ctx.tenant_id
    for observer in ctx.observers:
        if isinstance(observer, SessionRecorder):
            observer.owner = dict(ctx.owner)
    return context


def _keywords(run_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The run options as keywords (``options=RunOptions(...)`` unfolded), without ``light_swarm``."""
    options = run_kwargs.pop("options", None)
    if options is not None:
        given = {k: v for k, v in RunOptions.of(options).to_dict().items() if k != "stream"}
        run_kwargs = {**given, **run_kwargs}
    run_kwargs.pop("light_swarm", None)
    return run_kwargs


def as_swarm(value: Any) -> LightSwarm:
    """``value`` when it is a :class:`LightSwarm` (``run(light_swarm=...)``), else ``LA-CONFIG``."""
    if isinstance(value, LightSwarm):
        return value
    raise ConfigurationError(
        "LA-CONFIG",
        f"light_swarm= must be a LightSwarm, got {type(value).__name__}",
        hint="Pass the LightSwarm the agent is registered in, or call swarm.run(agent, query).",
    )


def _last_trace(agent: Any, spec: RunSpec, result: RunResult | None) -> None:
    """Each agent of the chain answers ``export_trace()`` with its own hop, as after its own
    ``agent.run`` (the seeds' trace API works on the agents, not only on the result)."""
    if hasattr(agent, "_last_trace"):  # LightAgent's record of its last run
        trace = (result.trace if result is not None else spec.ctx.trace) if spec.ctx.record else []
        agent._last_trace = trace


def _combined(results: list[RunResult]) -> RunResult | None:
    """The chain's result: the last run's, with every run's trace, tool calls, usage and handoffs."""
    if not results:
        return None
    final = results[-1]
    if len(results) == 1:
        return final
    final.trace = [event for r in results for event in r.trace]
    final.tool_calls = [call for r in results for call in r.tool_calls]
    final.handoffs = [h for r in results for h in r.handoffs]
    totals: dict[str, int] = {}
    for r in results:
        for k, v in (r.usage or {}).items():
            if isinstance(v, int):
                totals[k] = totals.get(k, 0) + v
    final.usage = totals or final.usage
    return final
