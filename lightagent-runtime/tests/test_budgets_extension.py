"""The ``budgets`` agent extension: what it claims, the agent's attributes, and the typed
error naming the extra when lightagent-runtime is not installed."""

from __future__ import annotations

import subprocess
import sys

import lightagent
import lightagent_runtime
from lightagent import (
    BudgetExceeded,
    BudgetLimits,
    ContextBudget,
    ContextCompactor,
    LightAgent,
    ProgressPolicy,
    ScriptedModel,
)
from lightagent.extensions import agent_extensions
from lightagent_runtime.budgets_extension import BudgetsExtension, BudgetsPart


def test_the_names_import_from_lightagent_and_from_the_distribution() -> None:
    for name in ("BudgetLimits", "BudgetExceeded", "ProgressPolicy", "ContextBudget"):
        assert getattr(lightagent, name) is getattr(lightagent_runtime, name)
    assert ContextCompactor is lightagent_runtime.ContextCompactor
    assert issubclass(BudgetExceeded, lightagent.BudgetError)


def test_the_extension_claims_the_keywords_options_and_attributes() -> None:
    extension = agent_extensions()["budgets"]
    assert isinstance(extension, BudgetsExtension)
    assert set(extension.keywords) == {
        "budget_limits",
        "progress_policy",
        "context_budget",
        "context_compactor",
    }
    assert set(extension.run_options) == {"budget_limits", "progress_policy"}


def test_the_agents_settings_are_its_attributes() -> None:
    budget = ContextBudget(max_tokens=4096)
    agent = LightAgent(
        model=ScriptedModel(["ok"]),
        budget_limits={"model_calls": 3},
        progress_policy=True,
        context_budget=budget,
    )
    assert agent.budget_limits == (BudgetLimits(model_calls=3),)
    assert agent.progress_policy == ProgressPolicy()
    assert agent.context_budget is budget
    assert isinstance(agent.context_compactor, ContextCompactor)  # made for the budget
    assert isinstance(agent.extension_part("budgets"), BudgetsPart)
    plain = LightAgent(model=ScriptedModel(["ok"]))
    assert plain.budget_limits == () and plain.progress_policy is None
    assert plain.context_budget is None and plain.context_compactor is None


def test_a_run_without_any_budget_has_no_step() -> None:
    part = BudgetsPart()
    assert part.run_step(None, lightagent.RunOptions()) is None
    step = part.run_step(None, lightagent.RunOptions(extensions={"progress_policy": True}))
    assert step is not None and step.budget is None and step.progress is not None


def test_without_the_distribution_the_names_fail_typed_naming_the_extra() -> None:
    code = (
        "import sys; sys.modules['lightagent_runtime'] = None\n"
        "from lightagent import LightAgent, ScriptedModel\n"
        "agent = LightAgent(model=ScriptedModel(['hi']), budget_limits=None)\n"
        "print(agent.run('no budget: no plugin needed'))\n"
        "for attempt in (\n"
        "    lambda: LightAgent(model=ScriptedModel(), budget_limits={'model_calls': 1}),\n"
        "    lambda: agent.run('q', progress_policy=True),\n"
        "    lambda: agent.context_budget,\n"
        "    lambda: __import__('lightagent').ContextCompactor,\n"
        "):\n"
        "    try:\n"
        "        attempt()\n"
        "    except ImportError as exc:\n"
        "        print(exc.code, exc.details['install'], sep='|')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    first, *rest = proc.stdout.strip().splitlines()
    assert first == "hi"
    assert rest == ["LA-MISSING-EXTRA|pip install 'lightagent-core[runtime]'"] * 4
