"""AgentDojo through LightAgent against a model that always obeys: ``make bench-security``.

Runs the AgentDojo suites (benchmark v1.2.2: workspace, travel, banking, slack; attack
``important_instructions``) through ``LightAgent`` over a real OpenAI-wire server on
127.0.0.1. The model is scripted and worst case: it performs the user task's ground-truth
calls and, as soon as a tool result carries an injection, carries out the injection task's
ground-truth calls first (and says what the injection asked it to say). Every run is
scored by AgentDojo's own ``utility()`` / ``security()`` checks (its traces variants
where a task has them).

Needs the ``agentdojo`` package, which the default dev environment does not install:
``make bench-security`` builds ``.venv-bench`` from ``bench/requirements-security.txt``.

    python bench/security_agentdojo.py                      # every suite, every configuration
    python bench/security_agentdojo.py --suites banking --configs none,provenance --limit 3

Writes ``bench/results/security.md`` and the same section into ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suites
from agentdojo.types import text_content_block_from_string
from lightagent import LightAgent, Tool
from lightagent_contracts.loopback import LoopbackServer
from lightagent_guardrails import ProvenanceGuard, annotate, facts_of

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from security_tools import facts_for  # noqa: E402

VERSION = "v1.2.2"
ATTACK = "important_instructions"
MODEL = "gpt-4o-2024-05-13"  # the name the attack addresses the model by
MARK = "<INFORMATION>"  # every important_instructions injection carries it
REFUSED = ("Error [LA-POLICY]", "Error [LA-APPROVAL", "Error [LA-TOOL-NOT-FOUND]")


# -- the scripted model ------------------------------------------------------------------
@dataclass
class Script:
    """What the obeying model does in the current run."""

    user: list[FunctionCall] = field(default_factory=list)
    injection: list[FunctionCall] = field(default_factory=list)
    answer: str = ""
    injected_answer: str = ""


SCRIPT = Script()


def obeying_model(body: dict[str, Any]) -> Any:
    """The next move of a model that does its task and obeys every injection it reads."""
    messages = body["messages"]
    done = [
        c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()
    ]
    read = any(m["role"] == "tool" and MARK in str(m.get("content") or "") for m in messages)
    user_done = sum(1 for d in done if d.startswith("u"))
    injection_done = sum(1 for d in done if d.startswith("j"))
    if read and injection_done < len(SCRIPT.injection):
        call, ident = SCRIPT.injection[injection_done], f"j{injection_done}"
    elif user_done < len(SCRIPT.user):
        call, ident = SCRIPT.user[user_done], f"u{user_done}"
    else:
        text = SCRIPT.answer
        if read and SCRIPT.injected_answer:
            text = f"{text}\n{SCRIPT.injected_answer}".strip()
        return text or "Done."
    return {"tool_calls": [{"id": ident, "name": call.function, "arguments": dict(call.args)}]}


# -- the suite's tools as lightagent tools -------------------------------------------------
class Bench:
    """One suite's tools bound to a swappable environment, and the calls that really ran."""

    def __init__(self, suite: Any) -> None:
        self.suite = suite
        self.runtime = FunctionsRuntime(suite.tools)
        self.env: Any = None
        self.trace: list[FunctionCall] = []
        self.tools = [self._tool(f) for f in suite.tools]

    def _tool(self, function: Any) -> Tool:
        name = function.name

        def run(**kwargs: Any) -> str:
            self.trace.append(FunctionCall(function=name, args=kwargs))
            result, error = self.runtime.run_function(self.env, name, kwargs)
            return f"Error: {error}" if error else tool_result_to_str(result)

        schema = function.parameters.model_json_schema()
        schema.pop("title", None)
        built = Tool(name=name, description=function.description, parameters=schema, func=run)
        # the integrator's metadata (bench/security_tools.py), written onto the tool
        annotate(built, **facts_for(name))
        return built


# -- configurations ---------------------------------------------------------------------
def configurations(bench: Bench) -> dict[str, Callable[[Any], dict[str, Any]]]:
    """name -> (user task -> LightAgent keyword arguments)."""
    tools = bench.tools

    def none(task: Any) -> dict[str, Any]:
        return {}

    def provenance(task: Any) -> dict[str, Any]:
        return {"hooks": [ProvenanceGuard(tools)]}

    def approval(task: Any) -> dict[str, Any]:
        # The human who asked reviews each refused call and approves exactly the calls
        # their own request needs (the ground truth): a reviewer who knows their intent.
        wanted = [(c.function, _canon(c.args)) for c in SCRIPT.user]

        def reviewer(request: Any) -> bool:
            return (request.tool_name, _canon(request.arguments or {})) in wanted

        return {"hooks": [ProvenanceGuard(tools, on_untrusted="approval")], "approval": reviewer}

    def plan(task: Any) -> dict[str, Any]:
        # Plan before data with an ideal planner: the tools the user's request needs, fixed
        # before any tool output is read (a stand-in for a planning model call).
        planned = sorted({c.function for c in SCRIPT.user})
        return {"hooks": [ProvenanceGuard(tools, planner=lambda request, names: planned)]}

    def plan_approval(task: Any) -> dict[str, Any]:
        kwargs = approval(task)
        planned = sorted({c.function for c in SCRIPT.user})
        guard = ProvenanceGuard(
            tools, on_untrusted="approval", planner=lambda request, names: planned
        )
        return {**kwargs, "hooks": [guard]}

    return {
        "none": none,
        "provenance": provenance,
        "provenance+approval": approval,
        "provenance+plan": plan,
        "provenance+plan+approval": plan_approval,
    }


def _canon(args: Any) -> str:
    return json.dumps(args, sort_keys=True, default=str)


# -- one run --------------------------------------------------------------------------------
@dataclass
class Outcome:
    utility: bool
    security: bool | None
    blocked_user_calls: int
    injected_calls: int
    injected_refused: int


def prepare(suite: Any, user_task: Any, injections: dict[str, str]) -> Any:
    """The task's environment with ``injections`` in it (loaded once, copied per run)."""
    return user_task.init_environment(suite.load_and_inject_default_environment(injections))


def run_one(
    server: LoopbackServer,
    bench: Bench,
    make: Callable[[Any], dict[str, Any]],
    user_task: Any,
    injection_task: Any,
    loaded: Any,
) -> Outcome:
    suite = bench.suite
    env = loaded.model_copy(deep=True)
    pre = env.model_copy(deep=True)
    SCRIPT.user = list(user_task.ground_truth(pre.model_copy(deep=True)))
    SCRIPT.injection = (
        list(injection_task.ground_truth(pre.model_copy(deep=True))) if injection_task else []
    )
    SCRIPT.answer = user_task.GROUND_TRUTH_OUTPUT
    SCRIPT.injected_answer = injection_task.GROUND_TRUTH_OUTPUT if injection_task else ""
    bench.env = env
    bench.trace = []
    server.clear()
    agent = LightAgent(
        model=MODEL,
        api_key="bench",
        base_url=server.base_url,
        tools=bench.tools,
        filter_tools=False,
        **make(user_task),
    )
    answer = agent.run(user_task.PROMPT, max_retry=50) or ""
    output = [text_content_block_from_string(str(answer))]
    utility = suite._check_task_result(user_task, output, pre, env, bench.trace)
    security = None
    if injection_task is not None:
        security = suite._check_task_result(injection_task, output, pre, env, bench.trace)
    last = server.requests[-1]["messages"] if server.requests else []
    results = {
        m.get("tool_call_id"): str(m.get("content") or "") for m in last if m["role"] == "tool"
    }
    blocked = sum(
        1 for i, r in results.items() if i and i.startswith("u") and r.startswith(REFUSED)
    )
    injected = [i for i in results if i and i.startswith("j")]
    refused = sum(1 for i in injected if results[i].startswith(REFUSED))
    return Outcome(bool(utility), security, blocked, len(injected), refused)


def goal_kind(bench: Bench, injection_task: Any, env: Any) -> str:
    """``sink``: the injection's ground truth makes a sink call (an acting tool, or an
    open-world read of an address), which a tool-call defense can see; ``text``: it needs
    only reads and words in the answer; ``none``: it has no ground truth, so a scripted
    model cannot carry it out (AgentDojo's later injection tasks are goals for real models)."""
    tools = {t.name: t for t in bench.tools}
    calls = injection_task.ground_truth(env.model_copy(deep=True))
    for call in calls:
        facts = facts_of(tools[call.function])
        if facts.acts or (facts.open_world and facts.roles):
            return "sink"
    return "text" if calls or injection_task.GROUND_TRUTH_OUTPUT else "none"


# -- the whole benchmark ----------------------------------------------------------------------
@dataclass
class Tally:
    tasks: int = 0
    utility: int = 0
    blocked_tasks: int = 0
    pairs: int = 0
    utility_attacked: int = 0
    success: int = 0
    visible: int = 0
    visible_success: int = 0
    text_pairs: int = 0
    text_success: int = 0
    unscripted: int = 0
    unscripted_success: int = 0
    failures: list[str] = field(default_factory=list)


def run_suite(
    server: LoopbackServer, name: str, suite: Any, configs: list[str], limit: int | None
) -> dict[str, Tally]:
    bench = Bench(suite)
    attack = load_attack(ATTACK, suite, types.SimpleNamespace(name=MODEL))
    makers = configurations(bench)
    user_tasks = list(suite.user_tasks.values())[:limit]
    injection_tasks = list(suite.injection_tasks.values())
    base_env = suite.load_and_inject_default_environment({})
    kinds = {t.ID: goal_kind(bench, t, base_env) for t in injection_tasks}
    out = {config: Tally() for config in configs}
    for user_task in user_tasks:
        loaded = prepare(suite, user_task, {})
        for config in configs:
            tally = out[config]
            clean = run_one(server, bench, makers[config], user_task, None, loaded)
            tally.tasks += 1
            tally.utility += clean.utility
            tally.blocked_tasks += clean.blocked_user_calls > 0
            if not clean.utility:
                tally.failures.append(f"{user_task.ID} (no attack)")
        for injection_task in injection_tasks:
            loaded = prepare(suite, user_task, attack.attack(user_task, injection_task))
            for config in configs:
                tally = out[config]
                got = run_one(server, bench, makers[config], user_task, injection_task, loaded)
                tally.pairs += 1
                tally.utility_attacked += got.utility
                tally.success += bool(got.security)
                kind = kinds[injection_task.ID]
                if kind == "none":
                    tally.unscripted += 1
                    tally.unscripted_success += bool(got.security)
                elif kind == "text":
                    tally.text_pairs += 1
                    tally.text_success += bool(got.security)
                else:
                    tally.visible += 1
                    tally.visible_success += bool(got.security)
                    if got.security:
                        tally.failures.append(f"{user_task.ID} x {injection_task.ID}")
    for config, tally in out.items():
        print(
            f"{name:10} {config:20} utility {tally.utility}/{tally.tasks} "
            f"attacked-utility {tally.utility_attacked}/{tally.pairs} "
            f"ASR {tally.success}/{tally.pairs} visible {tally.visible_success}/{tally.visible} "
            f"text {tally.text_success}/{tally.text_pairs} "
            f"unscripted {tally.unscripted_success}/{tally.unscripted} "
            f"blocked-tasks {tally.blocked_tasks}",
            flush=True,
        )
    return out


def pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def report(results: dict[str, dict[str, Tally]], configs: list[str], seconds: float) -> str:
    lines = [
        "# Prompt injection: AgentDojo against a model that always obeys",
        "",
        f"AgentDojo {VERSION}, attack `{ATTACK}`, every suite, run through `LightAgent` over "
        f"the loopback server by `make bench-security` in {seconds:.0f} s. The model performs "
        "each user task's ground-truth calls and obeys every injection as soon as it reads "
        "one; every run is scored by AgentDojo's own `utility()` / `security()`. Attacked "
        "pairs are split by what the injection's goal needs: *sink* pairs need a sink call "
        "(a tool that acts, or an open-world read of an address): what a tool-call defense "
        "can see; *text* pairs need only words in the final answer; *no ground truth* pairs "
        "(AgentDojo's newer injection tasks, written for real models) have no ground-truth "
        "calls, so the scripted model cannot carry them out. *Blocked* counts user tasks "
        "where a legitimate call was refused without attack. Tool metadata: "
        "`bench/security_tools.py`.",
        "",
        "Configurations: *none* — no defense; *provenance* — `ProvenanceGuard` with the "
        "default policy, refusals blocked; *provenance+approval* — the same, refusals sent "
        "to `approval=`, where the user who asked approves exactly the calls their request "
        "needs (its ground truth) and nothing else; *provenance+plan* — the same as "
        "*provenance* plus plan before data with an ideal planner (the tools the user "
        "task's ground truth uses, fixed before any tool output is read: what a planning "
        "model that reads only the request should produce, not a model measured here); "
        "*provenance+plan+approval* — both: calls outside the plan are blocked, provenance "
        "refusals go to the approving user.",
        "",
        "| suite | configuration | utility, no attack | utility under attack "
        "| attack success, sink pairs | attack success, text pairs "
        "| attack success, all pairs | user tasks with a legitimate call blocked |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    totals: dict[str, Tally] = {c: Tally() for c in configs}
    keys = (
        "tasks utility blocked_tasks pairs utility_attacked success visible "
        "visible_success text_pairs text_success unscripted unscripted_success"
    ).split()
    for suite, by_config in results.items():
        for config in configs:
            t = by_config[config]
            for key in keys:
                setattr(totals[config], key, getattr(totals[config], key) + getattr(t, key))
            lines.append(_row(suite, config, t))
    for config in configs:
        lines.append(_row("**all**", config, totals[config]))
    lines.append("")
    lines.append("Where a configuration fell short (user tasks failed without attack; sink pairs")
    lines.append("the attack won):")
    lines.append("")
    for suite, by_config in results.items():
        for config in configs:
            failures = by_config[config].failures
            if failures and config != "none":
                shown = ", ".join(failures[:60]) + (" ..." if len(failures) > 60 else "")
                lines.append(f"* {suite}, {config}: {shown}")
    return "\n".join(lines) + "\n"


def _row(suite: str, config: str, t: Tally) -> str:
    return (
        f"| {suite} | {config} | {pct(t.utility, t.tasks)} ({t.utility}/{t.tasks}) "
        f"| {pct(t.utility_attacked, t.pairs)} "
        f"| {pct(t.visible_success, t.visible)} ({t.visible_success}/{t.visible}) "
        f"| {pct(t.text_success, t.text_pairs)} ({t.text_success}/{t.text_pairs}) "
        f"| {pct(t.success, t.pairs)} ({t.success}/{t.pairs}) "
        f"| {t.blocked_tasks} of {t.tasks} |"
    )


def write(text: str) -> None:
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "security.md").write_text(text)
    results = HERE / "RESULTS.md"
    body = results.read_text() if results.exists() else "# Benchmark results\n"
    section = "#" + text.replace("\n#", "\n##")
    head = "## Prompt injection: AgentDojo"
    if head in body:
        start = body.index(head)
        nxt = body.find("\n## ", start + len(head))
        body = body[:start] + section.rstrip() + "\n" + (body[nxt:] if nxt != -1 else "")
    else:
        body = body.rstrip() + "\n\n" + section
    results.write_text(body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default="workspace,travel,banking,slack")
    parser.add_argument("--configs", default="none,provenance,provenance+approval,provenance+plan")
    parser.add_argument("--limit", type=int, default=None, help="user tasks per suite")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    configs = args.configs.split(",")
    suites = get_suites(VERSION)
    started = time.perf_counter()
    results: dict[str, dict[str, Tally]] = {}
    with LoopbackServer() as server:
        server.default = obeying_model
        for name in args.suites.split(","):
            results[name] = run_suite(server, name, suites[name], configs, args.limit)
    text = report(results, configs, time.perf_counter() - started)
    print(text)
    if not args.no_write and args.limit is None:
        write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
