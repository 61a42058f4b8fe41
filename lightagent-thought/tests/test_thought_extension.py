"""How Tree of Thought reaches LightAgent: claimed keywords and attributes, and the typed
error naming the extra when lightagent-thought is not installed."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest
from lightagent import LightAgent, ScriptedModel, TreeOfThought
from lightagent.errors import ConfigurationError
from lightagent.extensions import agent_extensions
from lightagent.run.state import RunState
from lightagent_thought import ThoughtExtension, ThoughtStep
from lightagent_thought.extension import PlanningStep


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


# Makes lightagent-thought look uninstalled: importing it fails as it would.
HIDE = "import sys; sys.modules['lightagent_thought'] = None\n"


def test_the_plugin_registers_the_extension() -> None:
    extension = agent_extensions()["thought"]
    assert isinstance(extension, ThoughtExtension)
    assert set(extension.keywords) == {
        "tree_of_thought",
        "tot_model",
        "tot_api_key",
        "tot_base_url",
    }
    assert set(extension.attributes) == {
        "tree_of_thought",
        "tot_model",
        "tot_client",
        "run_thought",
        "arun_thought",
    }


def test_the_attributes_are_served_with_or_without_the_keywords() -> None:
    plain = LightAgent(model=ScriptedModel())
    assert plain.tree_of_thought is None and plain.tot_model is None
    planned = LightAgent(model=ScriptedModel(), tree_of_thought=True)
    assert planned.tree_of_thought == TreeOfThought()
    assert planned.extension_part("thought").tree_of_thought is planned.tree_of_thought


def test_a_resumed_run_or_a_run_without_a_query_does_not_plan() -> None:
    step = PlanningStep(ThoughtStep(TreeOfThought()))
    state = RunState()
    resumed = SimpleNamespace(initial_messages=[{"role": "user", "content": "q"}])
    state.query_message = {"role": "user", "content": "q"}
    assert list(step.start(resumed, state, None, [], None)) == []
    fresh = SimpleNamespace(initial_messages=None)
    assert list(step.start(fresh, RunState(), None, [], None)) == []  # no query message
    assert state.stage is None and state.thought is None


def test_a_bad_setting_fails_the_construction() -> None:
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model=ScriptedModel(), tree_of_thought=3)
    assert info.value.code == "LA-CONFIG"


def test_without_the_distribution_each_seeds_name_names_the_extra() -> None:
    proc = _run(
        HIDE
        + "from lightagent import LightAgent, ScriptedModel\n"
        + "agent = LightAgent(model=ScriptedModel(['hi']), tree_of_thought=False, tot_model=None)\n"
        + "print(agent.run('no planning: no plugin needed'))\n"
        + "attempts = [\n"
        + "    lambda: LightAgent(model=ScriptedModel(), tree_of_thought=True),\n"
        + "    lambda: LightAgent(model=ScriptedModel(), tot_model='o4-mini'),\n"
        + "    lambda: agent.run_thought('plan'),\n"
        + "    lambda: agent.tot_client,\n"
        + "]\n"
        + "for attempt in attempts:\n"
        + "    try:\n"
        + "        attempt()\n"
        + "    except ImportError as exc:\n"
        + "        print(exc.code, exc.details['install'], sep='|')\n"
        + "try:\n"
        + "    from lightagent import TreeOfThought\n"
        + "except ImportError as exc:\n"
        + "    print(exc.code, exc.details['install'], sep='|')\n"
    )
    assert proc.returncode == 0, proc.stderr
    first, *errors = proc.stdout.strip().splitlines()
    assert first == "hi"
    assert errors == ["LA-MISSING-EXTRA|pip install 'lightagent-core[thought]'"] * 5
