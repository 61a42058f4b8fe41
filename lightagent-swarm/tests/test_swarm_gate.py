"""Handoffs are tool calls: they pass the security gate, and the target runs under a context
narrowed from its source's (never wider than either). On the ScriptedModel."""

from __future__ import annotations

from typing import Any

import pytest
from lightagent import LightAgent, LightSwarm, PermissionSet, ScriptedModel, SecurityContext
from swarm_kit import Recorder, transfer

RAN: list[str] = []


def secret() -> str:
    """Read the secret."""
    RAN.append("secret")
    return "the secret"


def lookup(city: str) -> str:
    """Look up `city`."""
    RAN.append(f"lookup {city}")
    return f"{city}: sunny"


def calls(*names: str) -> dict[str, Any]:
    args = {"secret": {}, "lookup": {"city": "Paris"}}
    return {"tool_calls": [{"name": n, "arguments": args[n]} for n in names]}


def gate_events(result: Any, capability: str) -> list[dict[str, Any]]:
    return [
        e["data"]
        for e in result.trace
        if e["type"] == "capability.gate" and e["data"]["capability"] == capability
    ]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


@pytest.mark.parametrize(
    "permissions",
    [PermissionSet.nothing(), PermissionSet(denied=["tool.transfer_to_*"])],
    ids=["allows-nothing", "denies-transfers"],
)
def test_a_context_that_refuses_the_transfer_keeps_the_conversation(permissions) -> None:
    a = Recorder(transfer("back"), "I will answer myself.")
    b = Recorder(calls("secret"), "done")
    front = LightAgent(
        name="front", model=a.model, security_context=SecurityContext(permissions=permissions)
    )
    back = LightAgent(name="back", model=b.model, tools=[secret])
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    result = swarm.run(front, "tell me the secret", result_format="object", trace=True)
    assert result.error is None and result.content == "I will answer myself."
    assert b.requests == [] and RAN == [] and result.handoffs == []
    # not permitted: the transfer is never offered (audited once as withheld), and the call
    # the model makes anyway is an unknown tool
    (withheld,) = gate_events(result, "tool.transfer_to_back")
    assert withheld["decision"] == "withhold" and withheld["check"] == "permissions"
    assert not a.requests[0].tools
    assert not [e for e in result.trace if e["type"] == "handoff"]
    refusal = a.requests[1].messages[-1]
    assert refusal["role"] == "tool" and refusal["content"].startswith("Error [LA-TOOL-NOT-FOUND]")
    (record,) = result.tool_calls
    assert record["name"] == "transfer_to_back"
    assert record["error"]["code"] == "LA-TOOL-NOT-FOUND"


def test_a_refused_transfer_leaves_the_turns_other_calls_to_run() -> None:
    both = {"tool_calls": [*calls("lookup")["tool_calls"], *transfer("back")["tool_calls"]]}
    a = Recorder(both, "Paris is sunny.")
    context = SecurityContext(permissions=PermissionSet(allowed=["tool.lookup"]))
    front = LightAgent(name="front", model=a.model, tools=[lookup], security_context=context)
    back = LightAgent(name="back", model=Recorder().model)
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    assert swarm.run(front, "weather?") == "Paris is sunny."
    assert RAN == ["lookup Paris"]
    results = [m for m in a.requests[1].messages if m["role"] == "tool"]
    assert results[0]["content"] == "Paris: sunny"
    assert results[1]["content"].startswith("Error [LA-TOOL-NOT-FOUND]")  # never offered


def test_the_target_runs_under_the_sources_context_when_it_has_none() -> None:
    a = Recorder(transfer("back"))
    b = Recorder(calls("secret", "lookup"), "done")
    allowed = ["tool.transfer_to_*", "tool.lookup"]
    front = LightAgent(
        name="front",
        model=a.model,
        security_context=SecurityContext(
            agent_id="front", permissions=PermissionSet(allowed=allowed)
        ),
    )
    back = LightAgent(name="back", model=b.model, tools=[secret, lookup])
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    result = swarm.run(front, "q", result_format="object", trace=True)
    assert result.content == "done" and RAN == ["lookup Paris"]
    (withheld,) = gate_events(result, "tool.secret")  # not offered to the target's model
    assert withheld["decision"] == "withhold"
    assert b.requests[0].tools and "secret" not in str(b.requests[0].tools)
    (allowed_call,) = gate_events(result, "tool.lookup")
    assert allowed_call["decision"] == "allow"
    assert back.interceptor is None  # the agent itself is not changed


def test_the_targets_own_broader_context_is_intersected_with_the_sources() -> None:
    a = Recorder(transfer("back"))
    b = Recorder(calls("secret", "lookup"), "done")
    front = LightAgent(
        name="front",
        model=a.model,
        security_context=SecurityContext(
            permissions=PermissionSet(allowed=["tool.transfer_to_*", "tool.lookup"])
        ),
    )
    own = SecurityContext(permissions=PermissionSet(denied=["tool.lookup"]), network_allowed=True)
    seen: list[Any] = []

    def spy(ctx: Any) -> None:
        if ctx.phase == "before_run":
            seen.append(ctx.security_context)

    back = LightAgent(
        name="back", model=b.model, tools=[secret, lookup], security_context=own, hooks=[spy]
    )
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    result = swarm.run(front, "q", result_format="object", trace=True)
    assert result.content == "done" and RAN == []  # secret: not the source's; lookup: not its own
    (bound,) = seen
    assert bound.is_within(front.interceptor.security_context) and bound.is_within(own)
    assert (bound.agent_id, bound.network_allowed) == ("back", False)
    assert [d["decision"] for d in gate_events(result, "tool.secret")] == ["withhold"]
    assert [d["decision"] for d in gate_events(result, "tool.lookup")] == ["withhold"]
    assert back.interceptor.security_context is own  # the agent itself is not changed


def test_a_context_carries_down_the_chain() -> None:
    a, b = Recorder(transfer("back")), Recorder(transfer("third"))
    c = Recorder(calls("secret"), "done")
    front = LightAgent(
        name="front",
        model=a.model,
        security_context=SecurityContext(permissions=PermissionSet(allowed=["tool.transfer_to_*"])),
    )
    back = LightAgent(name="back", model=b.model, security_context=SecurityContext())
    third = LightAgent(name="third", model=c.model, tools=[secret])
    swarm = LightSwarm()
    swarm.register_agent(front, back, third)
    result = swarm.run(front, "q", result_format="object", trace=True)
    assert result.content == "done" and RAN == []
    (withheld,) = gate_events(result, "tool.secret")
    assert withheld["decision"] == "withhold" and "secret" not in str(c.requests[0].tools)


def test_an_allowed_handoff_is_an_audited_gate_decision() -> None:
    a, b = Recorder(transfer("back")), Recorder("done")
    front = LightAgent(name="front", model=a.model, security_context=SecurityContext())
    back = LightAgent(name="back", model=b.model)
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    result = swarm.run(front, "q", result_format="object", trace=True)
    assert result.content == "done" and [h["target_agent"] for h in result.handoffs] == ["back"]
    (allowed,) = gate_events(result, "tool.transfer_to_back")
    assert allowed["decision"] == "allow"


def test_a_hook_that_redirects_a_handoff_cannot_pass_the_gate_by_it() -> None:
    from lightagent import HookDecision

    def redirect(ctx: Any) -> Any:
        if ctx.phase == "on_handoff":
            return HookDecision.replace({**ctx.payload, "target_agent": "vault"})
        return None

    a, v = Recorder(transfer("back")), Recorder()
    context = SecurityContext(permissions=PermissionSet(denied=["tool.transfer_to_vault"]))
    front = LightAgent(name="front", model=a.model, hooks=[redirect], security_context=context)
    swarm = LightSwarm()
    swarm.register_agent(
        front,
        LightAgent(name="back", model=Recorder().model),
        LightAgent(name="vault", model=v.model),
    )
    result = swarm.run(front, "q", result_format="object", trace=True)
    assert result.error["code"] == "LA-POLICY" and v.requests == [] and result.handoffs == []
    # never offered (withheld), and the redirected handoff still meets the gate's refusal
    decisions = [d["decision"] for d in gate_events(result, "tool.transfer_to_vault")]
    assert decisions == ["withhold", "deny"]
    failed = [e["data"] for e in result.trace if e["type"] == "handoff"]
    assert [(f["target_agent"], f["status"]) for f in failed] == [("vault", "failed")]


def test_a_target_whose_interceptor_cannot_carry_the_context_is_refused() -> None:
    from lightagent.errors import ConfigurationError
    from lightagent.interceptors import PhaseOutcome

    class OwnInterceptor:
        def on_phase_sync(self, run: Any, phase: str, payload: dict[str, Any]) -> Any:
            return PhaseOutcome()

        async def on_phase(self, run: Any, phase: str, payload: dict[str, Any]) -> Any:
            return PhaseOutcome()

    b = Recorder(calls("secret"), "done")
    front = LightAgent(
        name="front",
        model=Recorder(transfer("back")).model,
        security_context=SecurityContext(permissions=PermissionSet(allowed=["tool.transfer_*"])),
    )
    back = LightAgent(name="back", model=b.model, tools=[secret])
    back.interceptor = OwnInterceptor()
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    with pytest.raises(ConfigurationError) as info:
        swarm.run(front, "q")
    assert info.value.code == "LA-CONFIG" and info.value.hint
    assert b.requests == [] and RAN == []


def test_the_targets_owner_follows_its_narrowed_context() -> None:
    from lightagent import InMemorySessionStore
    from lightagent.interceptors import RunContext

    owners: list[Any] = []

    def whoami(context: RunContext) -> str:
        """Who the run acts for."""
        owners.append(context.owner)
        return "noted"

    store = InMemorySessionStore()
    a = Recorder(transfer("back"))
    b = Recorder({"tool_calls": [{"name": "whoami", "arguments": {}}]}, "done")
    allowed = PermissionSet(allowed=["tool.transfer_to_*", "tool.whoami"])
    front = LightAgent(
        name="front",
        model=a.model,
        session_store=store,
        security_context=SecurityContext(tenant_id="t1", permissions=allowed),
    )
    back = LightAgent(name="back", model=b.model, tools=[whoami], session_store=store)
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    result = swarm.run(front, "q", user_id="u", session_id="s", result_format="object")
    # the target searches and records as the tenant it was handed, not as no tenant at all
    assert result.error is None and result.content == "done"
    assert owners == [{"user_id": "u", "tenant_id": "t1"}]


def test_a_handoff_to_an_agent_of_another_tenant_is_refused() -> None:
    from lightagent.errors import PolicyError

    b = Recorder(calls("secret"), "done")
    front = LightAgent(
        name="front",
        model=Recorder(transfer("back")).model,
        security_context=SecurityContext(tenant_id="t1"),
    )
    back = LightAgent(
        name="back", model=b.model, tools=[secret], security_context=SecurityContext(tenant_id="t2")
    )
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    with pytest.raises(PolicyError) as info:
        swarm.run(front, "q", user_id="u")
    assert info.value.code == "LA-PERMISSION-WIDEN" and info.value.details["field"] == "tenant_id"
    assert b.requests == [] and RAN == []


class Crash(BaseException):
    """The process dying mid-run."""


def test_a_handoff_target_is_not_resumed_outside_its_narrowed_context(tmp_path) -> None:
    from lightagent import SqliteSessionStore
    from lightagent.errors import PolicyError

    store = SqliteSessionStore(tmp_path / "s.db")
    replies: list[Any] = [calls("secret"), Crash(), calls("secret"), "done"]

    def back_model(request: Any) -> Any:
        reply = replies.pop(0)
        if isinstance(reply, Crash):
            raise reply
        return reply

    front = LightAgent(
        name="front",
        model=ScriptedModel([transfer("back")]),
        session_store=store,
        security_context=SecurityContext(permissions=PermissionSet(allowed=["tool.transfer_*"])),
    )
    back = LightAgent(
        name="back", model=ScriptedModel(back_model), tools=[secret], session_store=store
    )
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    with pytest.raises(Crash):
        swarm.run(front, "q", user_id="u", session_id="s")
    assert RAN == []  # the narrowed context refused it
    started = [e for e in store.events("s") if e.type == "turn.started"]
    hop = started[-1].data
    assert hop["handoff"]["target_agent"] == "back"
    # resumed on its own, the target would run under its own, wider context
    with pytest.raises(PolicyError) as info:
        back.resume(hop["run_id"], session_id="s", user_id="u")
    assert info.value.code == "LA-PERMISSION-WIDEN" and info.value.hint
    assert RAN == [] and not [e for e in store.events("s") if e.type == "run.resumed"]
