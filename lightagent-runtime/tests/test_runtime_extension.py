"""The ``runtime`` agent extension: its attributes on the agent, and its run step, which takes
part in every run that has a session — also on an agent that never used a runtime name."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from lightagent import LightAgent, ScriptedModel
from lightagent.events.sql_store import SqliteSessionStore
from lightagent.extensions import agent_extensions, session_extensions
from lightagent.run.prepare import build_spec
from lightagent.run.run_options import RunOptions
from lightagent_runtime.agent_runtime import AgentRuntime
from lightagent_runtime.extension import RuntimeExtension, RuntimePart
from lightagent_runtime.steps import RuntimeStep


def _agent(db: Any, *answers: str) -> LightAgent:
    return LightAgent(
        name="planner",
        model=ScriptedModel(list(answers) or ["done"]),
        session_store=SqliteSessionStore(db),
    )


def test_the_extension_is_registered_and_acts_on_every_session_run() -> None:
    extension = agent_extensions()["runtime"]
    assert isinstance(extension, RuntimeExtension)
    assert "runtime" in session_extensions()
    assert {"runtime", "start_job", "send_message", "create_goal"} <= set(extension.attributes)


def test_the_attributes_come_from_the_agents_runtime_part(tmp_path) -> None:
    agent = _agent(tmp_path / "s.sqlite3")
    assert isinstance(agent.runtime, AgentRuntime)
    assert agent.runtime is agent.runtime  # one per agent
    assert isinstance(agent.extension_part("runtime"), RuntimePart)
    assert agent.goal_checks is agent.goal_checks  # one dict per agent, filled by create_goal


def test_a_fresh_agent_takes_in_the_inbox_and_checks_goals_of_its_session(tmp_path) -> None:
    db = tmp_path / "s.sqlite3"
    sender = _agent(db)
    sender.create_goal("s1", "Plan the release", acceptance_criteria=["plan ready"])
    sender.send_message("s1", "Code freeze starts Friday.", message_id="m1")

    worker = _agent(db, "Plan ready.")  # another instance: no runtime name used on it
    assert "runtime" not in worker._parts
    model = worker.model
    result = worker.run("Plan it", session_id="s1", result_format="object", trace=True)
    assert result.error is None
    sent = [m["content"] for m in model.requests[0].messages if m["role"] == "user"]
    assert sent == ["Plan it", "Code freeze starts Friday."]
    end = [e for e in result.trace if e["type"] == "run_end"][-1]
    assert [g["status"] for g in end["data"]["goals"]] == ["completed"]
    assert worker.session_goals("s1") == []  # closed: no open goal is left


def test_a_run_without_a_session_has_no_runtime_step(tmp_path) -> None:
    agent = _agent(tmp_path / "s.sqlite3")
    agent.extension_part("runtime")
    spec = build_spec(agent, "hi", RunOptions())
    assert not any(isinstance(step, RuntimeStep) for step in spec.steps)
    assert "runtime" not in spec.extensions
    spec = build_spec(agent, "hi", RunOptions(session_id="s2"))
    (step,) = [s for s in spec.steps if isinstance(s, RuntimeStep)]
    assert spec.extensions["runtime"] is step  # its inbox read, for a session budget


def test_without_the_distribution_the_runtime_names_name_the_extra(tmp_path) -> None:
    code = (
        "import sys; sys.modules['lightagent_runtime'] = None\n"
        "from lightagent import LightAgent, ScriptedModel, SqliteSessionStore\n"
        f"store = SqliteSessionStore({str(tmp_path / 's.sqlite3')!r})\n"
        "agent = LightAgent(model=ScriptedModel(['hi']), session_store=store)\n"
        "print(agent.run('a session run needs no runtime', session_id='s1'))\n"
        "for use in (lambda: agent.start_job, lambda: agent.runtime,\n"
        "            lambda: __import__('lightagent').JobManager):\n"
        "    try:\n"
        "        use()\n"
        "    except ImportError as exc:\n"
        "        print(exc.code, exc.details['install'], sep='|')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    first, *missing = proc.stdout.strip().splitlines()
    assert first == "hi"
    assert missing == ["LA-MISSING-EXTRA|pip install 'lightagent-core[runtime]'"] * 3
