"""The ``skills`` agent extension: what it claims, how a run reads ``use_skills``, and the
typed error seeds code gets when lightagent-skills is not installed."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from lightagent import LightAgent, ScriptedModel, vocabulary
from lightagent.errors import ConfigurationError
from lightagent.extensions import agent_extensions
from lightagent.run.run_options import RunOptions
from lightagent_skills.extension import SkillsExtension
from lightagent_skills.part import SkillsPart, use_skills


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_plugin_registers_the_extension() -> None:
    assert isinstance(agent_extensions()["skills"], SkillsExtension)


def test_the_vocabulary_rows_match_what_the_extension_claims() -> None:
    ext = SkillsExtension()
    keywords = {k: v for k, v in vocabulary.KEYWORDS.items() if v[0] == "skills"}
    assert keywords == {k: ("skills", v) for k, v in ext.keywords.items()}
    options = {k: v for k, v in vocabulary.RUN_OPTIONS.items() if v[0] == "skills"}
    assert options == {k: ("skills", v) for k, v in ext.run_options.items()}
    attributes = {k for k, v in vocabulary.ATTRIBUTES.items() if v == "skills"}
    assert attributes == set(ext.attributes)
    exported = {
        ep.name
        for ep in entry_points(group="lightagent.exports")
        if ep.value.startswith("lightagent_skills")
    }
    assert exported == {k for k, v in vocabulary.EXPORTS.items() if v == "skills"}


def test_every_attribute_is_served_from_the_part() -> None:
    agent = LightAgent(model=ScriptedModel())
    assert agent.sandbox is None and agent.skill_manager is None
    assert agent.project_instructions == ""
    part = agent.extension_part("skills")
    assert isinstance(part, SkillsPart)
    for name in SkillsExtension.attributes:
        assert hasattr(part, name), name
    assert agent.create_tool.__self__ is part


def test_a_bad_keyword_value_fails_the_construction() -> None:
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model=ScriptedModel(), sandbox=object())
    assert info.value.code == "LA-CONFIG"
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model=ScriptedModel(), project_instructions=42)
    assert info.value.code == "LA-CONFIG"


def test_use_skills_is_a_claimed_run_option() -> None:
    options = RunOptions.of(None, {"use_skills": False})
    assert options.extensions == {"use_skills": False}
    assert use_skills(options) is False
    assert use_skills(RunOptions()) is True
    assert options.to_dict()["use_skills"] is False


def test_without_the_distribution_seeds_names_name_the_extra() -> None:
    proc = _run(
        "import sys; sys.modules['lightagent_skills'] = None\n"
        "from lightagent import LightAgent, ScriptedModel\n"
        "agent = LightAgent(model=ScriptedModel(['hi']), auto_discover_skills=True, sandbox=None)\n"
        "print(agent.run('unused values need nothing', use_skills=True))\n"
        "def code(call):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as exc:\n"
        "        return f'{exc.code} {exc.details[\"install\"]}'\n"
        "    return 'no error'\n"
        "print(code(lambda: LightAgent(model=ScriptedModel(), skills_directories=['skills'])))\n"
        "print(code(lambda: agent.run('q', use_skills=False)))\n"
        "print(code(lambda: agent.create_tool('a tool')))\n"
        "print(code(lambda: __import__('lightagent').SkillManager))\n"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "hi"
    assert lines[1:] == ["LA-MISSING-EXTRA pip install 'lightagent-core[skills]'"] * 4
