"""Handoffs in the loop: a call to a transfer tool ends the run with a checked handoff.

A swarm-driven run carries a :class:`HandoffStep` (its ``spec.extensions["swarm"]`` is the
swarm's route) and offers ``transfer_to_<agent>`` tools; their definitions carry
:data:`~lightagent_swarm.handoffs.HANDOFF_TARGET` in their metadata. When the model calls
one, the call is not dispatched: like any tool call it passes ``tool_guardrail``
(guardrails, policy and the security gate; refused, it is answered as a denied call and
the run goes on), then ``on_handoff`` is asked (hooks, ``HumanApprovalHook``
— they may block it or edit its query or target), the route checks the target (known,
no cycle, within the hop limit), a ``handoff`` event is recorded, the transcript gets a
result for every call of the turn, and the run ends. The swarm then starts the target.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from lightagent.extensions import RunStep
from lightagent.models.base import ToolCall
from lightagent.run.effects import Output
from lightagent.run.phases import ask, blocked_or_replaced
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState
from lightagent.run.tool_round import screen_call
from lightagent.run.transcript import loads

from lightagent_swarm.handoffs import HANDOFF_TARGET, Handoff, Route

__all__ = ["HandoffStep", "take_handoff"]


def _target_of(spec: RunSpec, call: ToolCall) -> str | None:
    registry = spec.registry
    tool = registry.get(call.name) if registry is not None else None
    if tool is None:
        return None
    target = tool.metadata.get(HANDOFF_TARGET)
    return target if isinstance(target, str) and target else None


def _transfer_tool(spec: RunSpec, target: str) -> str | None:
    """The name of the run's transfer tool to ``target``, if it offers one."""
    tools = spec.registry if spec.registry is not None else ()
    return next((t.name for t in tools if t.metadata.get(HANDOFF_TARGET) == target), None)


def _conversation(messages: list[dict[str, Any]], query_message: Any) -> list[dict[str, Any]]:
    """The messages before this run's query, without system messages."""
    end = next((i for i, m in enumerate(messages) if m is query_message), len(messages))
    return [m for m in messages[:end] if m.get("role") != "system"]


def take_handoff(
    route: Route,
    spec: RunSpec,
    st: RunState,
    calls: list[ToolCall],
    assistant: dict[str, Any],
    messages: list[dict[str, Any]],
    query: str | None,
) -> Generator[Any, Any, Handoff | None]:
    """If ``calls`` hold a transfer call, perform the handoff and return it (else None).

    Raises the decider's ``PolicyError`` when ``on_handoff`` blocks, and the route's
    typed error (``LA-HANDOFF``, ``LA-HANDOFF-CYCLE``, ``LA-HANDOFF-LIMIT``) when the
    target is refused; the run then ends with that error.
    """
    chosen: tuple[ToolCall, str] | None = None
    for call in calls:
        target = _target_of(spec, call)
        if target is not None:
            chosen = (call, target)
            break
    if chosen is None:
        return None
    call, target = chosen
    ctx = spec.ctx
    raw = call.arguments
    if spec.interceptor is not None:
        # A transfer is a tool call: its tool_guardrail phase (guardrails, policy, the
        # security gate) decides on it as on any other, and on_handoff below stands for
        # before_tool_call. Refused, it is left to the round, which reports the refusal.
        st.stage = "handoff"
        screened, denied = yield from screen_call(spec, call, ("tool_guardrail",))
        if denied is not None:
            st.refused[call.id] = denied
            return None
        raw = screened.arguments
    arguments = loads(raw) if call.error is None else {}
    reason = arguments.get("reason") if isinstance(arguments, Mapping) else None
    reason = str(reason) if reason is not None else None
    source = ctx.agent_name
    handoff = Handoff(
        source_agent=source,
        target_agent=target,
        query=query,
        reason=reason,
        call_id=call.id,
        tool=call.name,
        history=_conversation(messages, st.query_message),
        trace_id=ctx.trace_id,
    )
    messages.append(assistant)
    if spec.stream:
        yield Output(
            "tool_call",
            {
                "name": call.name,
                "title": call.name,
                "arguments": call.arguments,
                "call_id": call.id,
            },
        )
    if spec.interceptor is not None:
        st.stage = "handoff"
        payload = {
            "source_agent": source,
            "target_agent": target,
            "query": query,
            "stream": spec.stream,
            "reason": reason,
            "call_id": call.id,
            "chain": list(route.chain),
        }
        out = yield from ask("on_handoff", payload)
        if out.action == "block":
            why = out.reason or "on_handoff blocked it"
            _record_calls(
                spec, st, calls, call, f"The handoff to {target} was blocked: {why}", messages
            )
            _event(spec, route, handoff, "blocked", reason=out.reason)
            blocked_or_replaced(ctx, out, "on_handoff", "LA-HOOK", None, "query")
        if out.action == "replace" and isinstance(out.payload, Mapping):
            _apply_edit(handoff, out.payload)
            edited = _transfer_tool(spec, handoff.target_agent)
            if handoff.target_agent != target and edited is not None:
                # a new target is a call of another transfer tool: the gate decides on it too
                redone = ToolCall(call.id, edited, raw)
                _, denied = yield from screen_call(spec, redone, ("tool_guardrail",))
                if denied is not None:
                    text = f"Error [{denied.code}] {denied.message}"
                    _record_calls(spec, st, calls, call, text, messages)
                    _event(spec, route, handoff, "failed", error=denied.to_dict())
                    raise denied
    st.stage = "handoff"
    refused = route.check(handoff.target_agent)
    if refused is not None:
        text = f"The handoff to {handoff.target_agent} was refused: {refused.message}"
        _record_calls(spec, st, calls, call, text, messages)
        _event(spec, route, handoff, "failed", error=refused.to_dict())
        raise refused
    _record_calls(spec, st, calls, call, f"Handed off to {handoff.target_agent}.", messages)
    _event(spec, route, handoff, "allowed")
    if spec.stream:
        yield Output("handoff", {"type": "handoff", **handoff.to_dict()})
    st.handoff = handoff
    route.taken = handoff
    return handoff


def _apply_edit(handoff: Handoff, payload: Mapping[str, Any]) -> None:
    """A hook's replacement: ``{"query", "target_agent"}``, or an approval's edited arguments."""
    arguments = payload.get("arguments")
    edited: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else payload
    query = edited.get("query", handoff.query)
    target = edited.get("target_agent", handoff.target_agent)
    handoff.query = query if isinstance(query, str) else handoff.query
    handoff.target_agent = target if isinstance(target, str) and target else handoff.target_agent


def _record_calls(
    spec: RunSpec,
    st: RunState,
    calls: list[ToolCall],
    chosen: ToolCall,
    outcome: str,
    messages: list[dict[str, Any]],
) -> None:
    """Give every call of the turn a result: the transcript (and the session) stay valid."""
    ctx = spec.ctx
    for call in calls:
        if call is chosen:
            output = outcome
        else:
            output = "Not run: this turn transferred the conversation."
        if ctx.active:
            ctx.emit(
                "tool_call",
                {
                    "id": call.id,
                    "call_id": call.id,
                    "name": call.name,
                    "title": call.name,
                    "arguments": loads(call.arguments),
                    "index": st.call_index,
                    "handoff": call is chosen,
                },
            )
            ctx.emit(
                "tool_result",
                {
                    "call_id": call.id,
                    "name": call.name,
                    "title": call.name,
                    "output": output,
                    "error": None,
                    "latency_ms": 0.0,
                },
            )
        st.call_index += 1
        st.executed.append(
            {
                "id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "output": output,
                "error": None,
                "latency_ms": 0.0,
                "idempotency_key": None,
            }
        )
        messages.append({"role": "tool", "tool_call_id": call.id, "content": output})


def _event(spec: RunSpec, route: Route, handoff: Handoff, status: str, **extra: Any) -> None:
    ctx = spec.ctx
    if ctx.active:
        ctx.emit(
            "handoff",
            {
                "source_agent": handoff.source_agent,
                "target_agent": handoff.target_agent,
                "query": handoff.query,
                "stream": spec.stream,
                "status": status,
                "reason": handoff.reason,
                "call_id": handoff.call_id,
                "chain": list(route.chain),
                **extra,
            },
        )


class HandoffStep(RunStep):
    """One swarm hop's part in its run: its transfer calls end the run with a handoff.

    ``route`` is the hop's :class:`~lightagent_swarm.handoffs.Route` (also the run's
    ``spec.extensions["swarm"]``). The ``run_start`` data of a hop a handoff started says
    where it came from (``handoff``: the handoff's :meth:`Handoff.to_dict`).
    """

    def __init__(self, route: Route) -> None:
        self.route = route
        #: The run's query as it was asked (after ``before_run`` and the input guardrails).
        self.query: str | None = None

    def begin(self, spec: RunSpec, st: RunState, start: dict[str, Any]) -> None:
        """A hop a handoff started records its arrival in ``run_start``."""
        arrived = self.route.arrived
        if arrived is not None:
            start["handoff"] = arrived.to_dict()

    def start(
        self,
        spec: RunSpec,
        st: RunState,
        history: Any,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> Generator[Any, Any, None]:
        """Keep the query the run asked: the handoff passes it on to the target."""
        asked = st.query_message
        content = asked.get("content") if asked is not None else None
        self.query = content if isinstance(content, str) else None
        return
        yield

    def calls(
        self,
        spec: RunSpec,
        st: RunState,
        calls: list[ToolCall],
        assistant: dict[str, Any],
        messages: list[dict[str, Any]],
    ) -> Generator[Any, Any, bool]:
        """True when ``calls`` held a transfer call that handed the run on (``st.handoff``)."""
        taken = yield from take_handoff(
            self.route, spec, st, calls, assistant, messages, self.query
        )
        return taken is not None
