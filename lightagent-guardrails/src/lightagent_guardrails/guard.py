"""``ProvenanceGuard``: a hook that refuses sink calls whose critical values came from untrusted content.

Against a model that obeys whatever it reads, marking tool output as data does nothing;
what counts is what the framework refuses. The guard records the run's sources (the user's
request, each tool result with its tool's declared trust), and before each call asks a sink
policy (:func:`~lightagent_guardrails.sink_policy.provenance_policy` by default) about the
provenance of its arguments. Optionally it fixes a plan before any data is read
(``planner=``): the tools a run may call are chosen from the user's request alone, so
untrusted content can fill values but never add a call. When the run read untrusted
content, the final answer loses sentences carrying links or contacts that only untrusted
content held (:mod:`~lightagent_guardrails.answer_check`).

Every refusal reaches the model as one line saying why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.hooks import HookContext, HookDecision

from lightagent_guardrails.answer_check import screen_answer
from lightagent_guardrails.provenance import Origin, Provenance
from lightagent_guardrails.sink_policy import SinkCall, SinkPolicy, SinkVerdict, provenance_policy
from lightagent_guardrails.tool_facts import ToolFacts, facts_of

__all__ = ["Planner", "ProvenanceGuard"]

#: ``planner(user_request, tool_names) -> tool names the run may call``; it sees no tool output.
Planner = Callable[[str, list[str]], Iterable[str]]

_STATE = "provenance"
_PLAN = "provenance_plan"


def _facts_table(tools: Any) -> dict[str, ToolFacts]:
    if tools is None:
        return {}
    if isinstance(tools, Mapping):
        items = list(tools.items())
    else:
        items = [(getattr(t, "name", None), t) for t in tools]
    table: dict[str, ToolFacts] = {}
    for name, tool in items:
        if not isinstance(name, str):
            raise ConfigurationError(
                "LA-CONFIG", f"ProvenanceGuard: a tool without a name: {tool!r}"[:200]
            )
        table[name] = tool if isinstance(tool, ToolFacts) else facts_of(tool)
    return table


class ProvenanceGuard:
    """A hook: provenance per run, a sink policy on each call, an optional plan, an answer check.

    ``tools``: the agent's tools (``Tool`` / ``ToolDefinition`` objects, or a mapping of
    name to a tool, its metadata or :class:`ToolFacts`); a tool not listed is treated as
    acting with every argument critical. ``policy``: a sink policy (default
    :func:`provenance_policy` with ``on_untrusted``). ``planner``: opt-in plan before data.
    ``check_answer``: screen the final answer when the run read untrusted content.
    """

    def __init__(
        self,
        tools: Any = None,
        *,
        policy: SinkPolicy | None = None,
        on_untrusted: str = "block",
        planner: Planner | None = None,
        check_answer: bool = True,
        system: str | None = None,
        name: str = "provenance_guard",
    ) -> None:
        self.facts = _facts_table(tools)
        self.policy = policy if policy is not None else provenance_policy(on_untrusted=on_untrusted)
        self.planner = planner
        self.check_answer = check_answer
        self.system = system
        self.name = name
        self.phases = frozenset(
            {"before_run", "before_tool_call", "after_tool_result", "output_guardrail"}
        )

    def facts_for(self, tool: str) -> ToolFacts:
        """The declared facts of ``tool`` (an undeclared tool acts, every argument critical)."""
        return self.facts.get(tool) or ToolFacts()

    @staticmethod
    def provenance(ctx: HookContext) -> Provenance:
        """The run's :class:`Provenance` (made on first use)."""
        found = ctx.state.get(_STATE)
        if not isinstance(found, Provenance):
            found = ctx.state[_STATE] = Provenance()
        return found

    # -- phases: the HookManager calls the method named after the phase ----------------
    def before_run(self, ctx: HookContext) -> HookDecision | None:
        """Record the user's request (and the system prompt); fix the plan when asked."""
        payload = ctx.payload or {}
        ledger = self.provenance(ctx)
        query = payload.get("query")
        if query is not None:
            ledger.add(query, Origin("user", "user"))
        if self.system:
            ledger.add(self.system, Origin("system", "system"))
        if self.planner is not None:
            names = [str(n) for n in payload.get("tools") or ()]
            plan = frozenset(str(n) for n in self.planner(str(query or ""), names))
            ctx.state[_PLAN] = plan
            ctx.emit(
                "hook_decision",
                {"phase": ctx.phase, "hook": self.name, "action": "plan", "tools": sorted(plan)},
            )
        return None

    def after_tool_result(self, ctx: HookContext) -> HookDecision | None:
        """Record a tool result with its tool's trust (output the loop marks untrusted stays so)."""
        payload = ctx.payload or {}
        tool = str(payload.get("tool_name"))
        trust = self.facts_for(tool).output_trust
        if payload.get("untrusted") and trust in ("user", "system", "user_data"):
            trust = "third_party"
        origin = Origin("tool", trust, tool, payload.get("call_id"))
        self.provenance(ctx).add(payload.get("output"), origin)
        return None

    def before_tool_call(self, ctx: HookContext) -> HookDecision | None:
        """The plan, then the sink policy, on one call."""
        payload = ctx.payload or {}
        tool = str(payload.get("tool_name"))
        arguments = payload.get("arguments")
        arguments = arguments if isinstance(arguments, Mapping) else {}
        plan = ctx.state.get(_PLAN)
        if plan is not None and tool not in plan:
            planned = ", ".join(sorted(plan)) or "none"
            return self._refuse(
                ctx,
                tool,
                SinkVerdict(
                    "block",
                    f"{tool} is not in the plan fixed from the user's request (planned: {planned})",
                ),
            )
        call = SinkCall(tool, arguments, self.facts_for(tool), self.provenance(ctx))
        verdict = self.policy(call)
        if verdict is None or verdict.action == "allow":
            return None
        return self._refuse(ctx, tool, verdict)

    def output_guardrail(self, ctx: HookContext) -> HookDecision | None:
        """Drop sentences carrying links or contacts only untrusted content held."""
        if not self.check_answer:
            return None
        payload = ctx.payload
        content = payload.get("content") if isinstance(payload, Mapping) else payload
        if not isinstance(content, str) or not content:
            return None
        screened = screen_answer(content, self.provenance(ctx))
        if not screened.removed:
            return None
        ctx.emit(
            "hook_decision",
            {
                "phase": ctx.phase,
                "hook": self.name,
                "action": "redact",
                "removed": screened.removed,
            },
        )
        return HookDecision.replace({"content": screened.text})

    def _refuse(self, ctx: HookContext, tool: str, verdict: SinkVerdict) -> HookDecision:
        reason = " ".join((verdict.reason or f"{tool} was refused").split())
        ctx.emit(
            "hook_decision",
            {"phase": ctx.phase, "hook": self.name, "action": verdict.action, "reason": reason},
        )
        if verdict.action == "approval":
            return HookDecision.require_approval(reason)
        return HookDecision.block(f"[LA-POLICY] {reason}", {"code": "LA-POLICY"})
