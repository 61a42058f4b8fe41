"""Budgets the loop consults: checked before each request (estimated), settled from the
provider's usage after, refused steps never committed; per run and per session (restored
from the session log, also in a new process). Against the loopback OpenAI-wire server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time

import pytest
from lightagent import BudgetExceeded, BudgetLimits, ConfigurationError, LightAgent
from lightagent.events.sql_store import SqliteSessionStore

CALLS: list[str] = []


def lookup(city: str) -> str:
    """Look up `city`."""
    CALLS.append(city)
    return f"{city}: sunny"


def slow(city: str) -> str:
    """Look up `city`, slowly."""
    time.sleep(1.3)
    return f"{city}: sunny"


def agent_for(server, **kw) -> LightAgent:
    return LightAgent(model="gpt-4.1", api_key="k", base_url=server.base_url, **kw)


def call(name: str = "lookup", city: str = "Paris", usage: dict | None = None) -> dict:
    reply: dict = {"tool_calls": [{"name": name, "arguments": {"city": city}}]}
    if usage is not None:
        reply["usage"] = usage
    return reply


def events(result, kind: str) -> list[dict]:
    return [e["data"] for e in result.trace if e["type"] == kind]


def test_model_calls_budget_refuses_the_next_request_before_it_goes_out(loopback_server) -> None:
    loopback_server.reply(call())  # the second request is never sent
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=BudgetLimits(model_calls=1))
    result = agent.run("weather?", result_format="object", trace=True)
    assert len(loopback_server.requests) == 1
    assert result.error["code"] == "LA-BUDGET"
    details = result.error["details"]
    assert details["dimension"] == "model_calls"
    assert details["exit_reason"] == "budget_exceeded"
    assert (details["limit"], details["used"], details["requested"]) == (1, 1, 1)
    # the refused request was not committed: one model call consumed, then exhausted
    consumed = [e["delta"].get("model_calls", 0) for e in events(result, "budget_consumed")]
    assert sum(consumed) == 1
    assert events(result, "budget_exhausted")[0]["step"] == "model_request"
    assert events(result, "run_end")[0]["exit_reason"] == "budget_exceeded"


def test_tool_calls_budget_refuses_a_round_before_any_tool_runs(loopback_server) -> None:
    CALLS.clear()
    two = {
        "tool_calls": [
            {"name": "lookup", "arguments": {"city": "Paris"}},
            {"name": "lookup", "arguments": {"city": "Rome"}},
        ]
    }
    loopback_server.reply(two)
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=BudgetLimits(tool_calls=1))
    result = agent.run("weather?", result_format="object", trace=True)
    assert CALLS == []  # neither call ran
    assert result.error["details"]["dimension"] == "tool_calls"
    assert result.error["details"]["requested"] == 2
    assert not events(result, "tool_call")


def test_input_tokens_are_estimated_from_the_request(loopback_server) -> None:
    agent = agent_for(loopback_server, budget_limits={"input_tokens": 5})
    result = agent.run("a question long enough to pass five tokens", result_format="object")
    assert result.error["details"]["dimension"] == "input_tokens"
    assert result.error["details"]["requested"] > 5
    assert loopback_server.requests == []  # refused before it went out


def test_budget_exceeded_is_a_typed_budget_error() -> None:
    from lightagent import BudgetError

    exc = BudgetExceeded("tool_calls", 3, 3, requested=1, scope="session")
    assert isinstance(exc, BudgetError) and exc.code == "LA-BUDGET"
    assert (exc.dimension, exc.limit, exc.used, exc.scope) == ("tool_calls", 3, 3, "session")
    assert "BudgetLimits(tool_calls=" in exc.hint


def test_output_tokens_settle_from_the_providers_usage(loopback_server) -> None:
    loopback_server.reply(call(usage={"prompt_tokens": 10, "completion_tokens": 50}))
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=BudgetLimits(output_tokens=60))
    result = agent.run(
        "weather?", result_format="object", trace=True, model_options={"max_tokens": 20}
    )
    # estimate 20 passed; the provider said 50; the next estimate (50 + 20) is refused
    assert len(loopback_server.requests) == 1
    details = result.error["details"]
    assert (details["dimension"], details["used"], details["requested"]) == (
        "output_tokens",
        50,
        20,
    )
    settled = events(result, "budget_consumed")[0]["delta"]
    assert settled["input_tokens"] == 10 and settled["output_tokens"] == 50


def test_cost_budget_uses_the_token_prices(loopback_server) -> None:
    loopback_server.reply(call(usage={"prompt_tokens": 0, "completion_tokens": 40}))
    limits = BudgetLimits(cost=0.5, output_token_price=0.01)
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=limits)
    result = agent.run("weather?", result_format="object", model_options={"max_tokens": 30})
    details = result.error["details"]
    assert details["dimension"] == "cost"
    assert details["used"] == pytest.approx(0.4)
    assert details["requested"] == pytest.approx(0.3)


def test_seconds_budget_ends_the_run_at_the_next_step(loopback_server) -> None:
    loopback_server.reply(call("slow"))
    # 1 s: a loaded machine still sends the first request within it; the tool outlasts it.
    agent = agent_for(loopback_server, tools=[slow], budget_limits=BudgetLimits(seconds=1.0))
    result = agent.run("weather?", result_format="object")
    assert result.error["details"]["dimension"] == "seconds"
    assert len(loopback_server.requests) == 1


def test_run_option_adds_a_budget_and_async_obeys_it(loopback_server) -> None:
    loopback_server.reply("fine", "fine")
    agent = agent_for(loopback_server)
    assert agent.run("q") == "fine"
    refused = agent.run("q", budget_limits=BudgetLimits(model_calls=0), result_format="object")
    assert refused.error["details"]["dimension"] == "model_calls"
    assert asyncio.run(agent.arun("q")) == "fine"
    refused = asyncio.run(
        agent.arun("q", budget_limits=[{"model_calls": 0}], result_format="object")
    )
    assert refused.error["code"] == "LA-BUDGET"
    assert len(loopback_server.requests) == 2


def test_streamed_run_is_refused_too(loopback_server) -> None:
    agent = agent_for(loopback_server, budget_limits=BudgetLimits(model_calls=0))
    items = list(agent.run("q", stream=True))
    assert items[-1]["code"] == "LA-BUDGET"
    assert loopback_server.requests == []


def test_session_budget_spans_runs_and_is_restored_from_the_log(loopback_server, tmp_path) -> None:
    db = tmp_path / "s.sqlite3"
    loopback_server.reply("one", "two")
    limits = BudgetLimits(model_calls=2, per="session")
    agent = agent_for(loopback_server, session_store=SqliteSessionStore(db), budget_limits=limits)
    assert agent.run("a", session_id="s1") == "one"
    # a new agent over a new store object: only the log remembers the first run
    again = agent_for(loopback_server, session_store=SqliteSessionStore(db), budget_limits=limits)
    assert again.run("b", session_id="s1") == "two"
    third = again.run("c", session_id="s1", result_format="object")
    assert third.error["details"]["scope"] == "session"
    assert third.error["details"]["used"] == 2
    assert len(loopback_server.requests) == 2
    # another session has its own ledger
    loopback_server.reply("other")
    assert again.run("d", session_id="s2") == "other"
    types = [e.type for e in SqliteSessionStore(db).events("s1")]
    assert types.count("budget.consumed") >= 2 and "budget.exhausted" in types


def test_a_run_counts_what_a_concurrent_run_of_its_session_consumed(
    loopback_server, tmp_path
) -> None:
    db = tmp_path / "s.sqlite3"
    limits = BudgetLimits(model_calls=3, per="session")
    holder: dict = {}

    def meanwhile(city: str) -> str:
        """Look up `city` while another run of the session takes two model calls."""
        # the second run starts after the first one's model call is settled in the log
        other = agent_for(
            loopback_server,
            session_store=SqliteSessionStore(db),
            budget_limits=limits,
            tools=[lookup],
        )
        holder["other"] = other.run("b", session_id="s1", result_format="object")
        return f"{city}: sunny"

    loopback_server.reply(
        call("meanwhile"),  # the first run's first call: a tool, which runs the second run
        call("lookup", "Rome"),  # the second run: two calls, a tool round and its answer
        "second run done",
    )
    agent = agent_for(
        loopback_server,
        session_store=SqliteSessionStore(db),
        budget_limits=limits,
        tools=[meanwhile, lookup],
    )
    first = agent.run("a", session_id="s1", result_format="object")
    assert holder["other"].error is None and holder["other"].content == "second run done"
    assert len(loopback_server.requests) == 3  # 1 + 2: the first run's next call is refused
    assert first.error["code"] == "LA-BUDGET"
    assert first.error["details"]["scope"] == "session" and first.error["details"]["used"] == 3
    assert loopback_server.requests[-1]["messages"][-1]["content"] == "Rome: sunny"


@pytest.mark.slow
def test_session_budget_survives_a_killed_process(loopback_server, tmp_path) -> None:
    db = tmp_path / "crash.sqlite3"
    loopback_server.reply(call(usage={"prompt_tokens": 10, "completion_tokens": 30}), "done")
    child = textwrap.dedent(
        f"""
        import os
        from lightagent import BudgetLimits, LightAgent
        from lightagent.events.sql_store import SqliteSessionStore

        def lookup(city: str) -> str:
            '''Look up `city`.'''
            return "sunny"

        agent = LightAgent(model="gpt-4.1", api_key="k", base_url={loopback_server.base_url!r},
                           tools=[lookup], session_store=SqliteSessionStore({str(db)!r}),
                           budget_limits=BudgetLimits(tool_calls=1, output_tokens=40,
                                                      per="session"))
        print(agent.run("weather?", session_id="job"), flush=True)
        os._exit(9)  # die without any cleanup
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert proc.returncode == 9, proc.stderr
    assert proc.stdout.strip() == "done"
    limits = BudgetLimits(tool_calls=1, output_tokens=40, per="session")
    agent = agent_for(
        loopback_server,
        tools=[lookup],
        session_store=SqliteSessionStore(db),
        budget_limits=limits,
    )
    loopback_server.reply(call(usage={"prompt_tokens": 10, "completion_tokens": 5}))
    CALLS.clear()
    result = agent.run("again", session_id="job", result_format="object")
    # 30 + the "done" answer's tokens were spent before the crash; one tool call too
    assert result.error["details"]["scope"] == "session"
    assert result.error["details"]["dimension"] in ("output_tokens", "tool_calls")
    assert CALLS == []


@pytest.mark.parametrize(
    "kwargs",
    [{"per": "turn"}, {"model_calls": -1}, {"cost": "cheap"}, {"tokens": True}],
)
def test_bad_limits_are_config_errors(kwargs) -> None:
    with pytest.raises(ConfigurationError) as info:
        BudgetLimits(**kwargs)
    assert info.value.code == "LA-CONFIG" and info.value.hint


def test_bad_budget_limits_argument_is_a_config_error(loopback_server) -> None:
    with pytest.raises(ConfigurationError) as info:
        agent_for(loopback_server, budget_limits="ten calls")
    assert info.value.code == "LA-CONFIG"
    with pytest.raises(ConfigurationError) as info:
        agent_for(loopback_server).run("q", budget_limits={"calls": 1})
    assert "model_calls" in info.value.hint


# -- settled usage is checked before the next step (no max_tokens to estimate from) --------
SIXTY = {"prompt_tokens": 10, "completion_tokens": 60, "total_tokens": 70}


def test_a_spent_output_budget_stops_the_run_before_the_next_step(loopback_server) -> None:
    CALLS.clear()
    loopback_server.reply(call(usage=SIXTY))  # the only request: the tool round is refused
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=BudgetLimits(output_tokens=50))
    result = agent.run("weather?", result_format="object", trace=True)
    assert len(loopback_server.requests) == 1 and CALLS == []
    assert "max_tokens" not in loopback_server.requests[0]
    assert result.error["code"] == "LA-BUDGET"
    details = result.error["details"]
    assert (details["dimension"], details["used"], details["limit"]) == ("output_tokens", 60, 50)
    assert events(result, "budget_exhausted")[0]["step"] == "tool_execution"


def test_an_output_budget_spent_exactly_refuses_the_next_request(loopback_server) -> None:
    loopback_server.reply(*[call(usage={"prompt_tokens": 1, "completion_tokens": 25})] * 2)
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=BudgetLimits(output_tokens=50))
    result = agent.run("weather?", result_format="object")
    # 25 + 25 = 50: the budget is spent, and any reply takes at least one more token
    assert len(loopback_server.requests) == 2
    details = result.error["details"]
    assert (details["dimension"], details["used"], details["requested"]) == ("output_tokens", 50, 1)


def test_a_spent_session_output_budget_refuses_the_next_run(loopback_server, tmp_path) -> None:
    store = SqliteSessionStore(tmp_path / "s.sqlite3")
    loopback_server.reply({"content": "one", "usage": SIXTY})
    limits = BudgetLimits(output_tokens=50, per="session")
    agent = agent_for(loopback_server, session_store=store, budget_limits=limits)
    assert agent.run("a", session_id="s1") == "one"  # the answer that overspent is kept
    second = agent.run("b", session_id="s1", result_format="object")
    assert second.error["details"]["scope"] == "session"
    assert second.error["details"]["dimension"] == "output_tokens"
    assert len(loopback_server.requests) == 1


def test_a_cost_budget_priced_by_output_alone_stops_the_run(loopback_server) -> None:
    CALLS.clear()
    loopback_server.reply(call(usage=SIXTY))
    limits = BudgetLimits(cost=0.5, output_token_price=0.01)
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=limits)
    result = agent.run("weather?", result_format="object")
    assert len(loopback_server.requests) == 1 and CALLS == []
    assert result.error["details"]["dimension"] == "cost"
    assert result.error["details"]["used"] == pytest.approx(0.6)


def test_negative_usage_is_clamped_recorded_and_never_refills_a_budget(loopback_server) -> None:
    negative = {"prompt_tokens": -1000, "completion_tokens": -500, "total_tokens": -1500}
    loopback_server.reply(call(usage=negative), call(usage=SIXTY))
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=BudgetLimits(output_tokens=50))
    result = agent.run("weather?", result_format="object", trace=True)
    # read as 0, the first reply leaves the budget as it was: the second one spends it
    assert len(loopback_server.requests) == 2
    assert result.error["details"]["dimension"] == "output_tokens"
    assert result.error["details"]["used"] == 60
    (clamped,) = events(result, "usage_clamped")
    assert clamped["reported"] == negative and clamped["request_index"] == 1
    first = events(result, "model_response")[0]["usage"]
    assert first == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    for consumed in events(result, "budget_consumed"):
        assert all(v >= 0 for v in consumed["delta"].values())
    assert min(result.usage.values()) >= 0


def test_usage_below_zero_reads_as_zero_and_says_so() -> None:
    from lightagent.models.base import Usage

    usage = Usage.from_any({"prompt_tokens": 7, "completion_tokens": -3})
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (7, 0, 7)
    assert usage.clamped == {"completion_tokens": -3}
    assert Usage.from_any({"prompt_tokens": 7}).clamped == {}
    assert Usage(-1, 2, 1).clamped == {"prompt_tokens": -1}


@pytest.mark.parametrize(
    "count",
    [float("nan"), 10**400, "many", [60]],
    ids=["nan", "huge", "text", "list"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "streamed"])
def test_a_usage_count_that_is_not_a_number_is_a_typed_model_error(
    loopback_server, count, stream
) -> None:
    CALLS.clear()
    loopback_server.reply(call(usage={"prompt_tokens": 10, "completion_tokens": count}))
    agent = agent_for(loopback_server, tools=[lookup], budget_limits=BudgetLimits(output_tokens=50))
    if stream:
        error = list(agent.run("weather?", stream=True))[-1]["details"]
    else:
        error = agent.run("weather?", result_format="object").error
    # a count the budget cannot settle ends the run before any tool runs, named
    assert error["code"] == "LA-MODEL-OUTPUT" and error["details"]["field"] == "completion_tokens"
    assert CALLS == [] and len(loopback_server.requests) == 1


def test_a_count_sent_as_text_is_read() -> None:
    from lightagent.models.base import Usage

    usage = Usage.from_any({"prompt_tokens": "7", "completion_tokens": 2.0})
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (7, 2, 9)
