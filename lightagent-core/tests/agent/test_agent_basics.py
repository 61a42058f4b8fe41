"""LightAgent construction, run() parameters and result formats (offline, ScriptedModel)."""

from __future__ import annotations

import os

import pytest
from lightagent import ConfigurationError, LightAgent, RunResult, ScriptedModel
from lightagent.run.options import UNAVAILABLE


def test_default_run_returns_str(scripted_model: ScriptedModel) -> None:
    scripted_model.add("Hello, I am LightAgent.")
    agent = LightAgent(model=scripted_model)
    answer = agent.run("Hello, who are you?")
    assert answer == "Hello, I am LightAgent."
    request = scripted_model.requests[0]
    assert request.messages[0] == {"role": "system", "content": "You are a helpful agent."}
    assert request.messages[-1] == {"role": "user", "content": "Hello, who are you?"}
    assert request.tools is None


def test_instructions_role_and_history(scripted_model: ScriptedModel) -> None:
    scripted_model.add("ok")
    agent = LightAgent(model=scripted_model, instructions="Be brief.", role="You are Ada.")
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "yes"}]
    agent.run("now", history=history)
    messages = scripted_model.requests[0].messages
    assert messages[0]["content"] == "Be brief.\nYou are Ada."
    assert messages[1:3] == history
    assert messages[3] == {"role": "user", "content": "now"}


def test_object_and_dict_formats(scripted_model: ScriptedModel) -> None:
    scripted_model.add(
        {
            "content": "42",
            "reasoning_content": "6*7",
            "usage": {"prompt_tokens": 3, "completion_tokens": 1},
        },
        "again",
    )
    agent = LightAgent(model=scripted_model)
    result = agent.run("q", result_format="object")
    assert isinstance(result, RunResult)
    assert str(result) == "42" and result.content == "42"
    assert result.reasoning_content == "6*7"
    assert result.usage == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    assert result.error is None and result.success
    assert result.trace_id and result.trace == []
    as_dict = agent.run("q", result_format="dict")
    assert as_dict["content"] == "again" and as_dict["error"] is None


@pytest.mark.parametrize(
    ("result_format", "stream"),
    [("event", False), ("object", True), ("dict", True), ("xml", False)],
)
def test_invalid_result_format_combinations(result_format: str, stream: bool) -> None:
    agent = LightAgent(model=ScriptedModel())
    with pytest.raises(ConfigurationError) as info:
        agent.run("q", result_format=result_format, stream=stream)
    assert info.value.code == "LA-CONFIG"


@pytest.mark.parametrize("name", sorted(set(UNAVAILABLE) - {"auto_discover_skills"}))
def test_unavailable_subsystems_are_refused_not_ignored(name: str) -> None:
    value = {"tree_of_thought": True, "self_learning": True, "enable_unsafe_python": True}.get(
        name, "x"
    )
    with pytest.raises(ConfigurationError) as info:
        LightAgent(model=ScriptedModel(), **{name: value})
    assert info.value.code == "LA-CONFIG"
    assert "not available in lightagent-core 0.1" in info.value.message
    assert name in info.value.message


def test_defaults_of_unavailable_parameters_are_accepted() -> None:
    agent = LightAgent(model=ScriptedModel(), **UNAVAILABLE)
    assert agent.name.startswith("LightAgent")
    LightAgent(model=ScriptedModel(), auto_discover_skills=False)  # 0.1 never scans for skills


def test_construction_has_no_side_effects(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    LightAgent(
        model="gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1", log_file=None
    )
    assert os.listdir(tmp_path) == []


def test_bad_model_object_and_run_arguments() -> None:
    with pytest.raises(ConfigurationError):
        LightAgent(model=object())
    agent = LightAgent(model=ScriptedModel())
    with pytest.raises(ConfigurationError) as info:
        agent.run("q", temprature=0.2)
    assert "temprature" in info.value.message
    with pytest.raises(ConfigurationError):
        agent.run("q", max_retry=-1)
    with pytest.raises(ConfigurationError):
        agent.run(123)
    with pytest.raises(ConfigurationError):
        agent.run("q", cancellation_token="yes")


@pytest.mark.parametrize(
    ("kwargs", "unknown", "meant"),
    [
        ({"bogus": 1}, ["bogus"], {}),
        ({"modle": "gpt-4.1"}, ["modle"], {"modle": "model"}),
        ({"tool": []}, ["tool"], {"tool": "tools"}),
        ({"sesion_store": None, "instructons": "x"}, ["instructons", "sesion_store"], None),
    ],
)
def test_unknown_constructor_keywords_are_typed_with_a_did_you_mean(kwargs, unknown, meant) -> None:
    with pytest.raises(ConfigurationError) as info:
        LightAgent(**kwargs)
    error = info.value
    assert error.code == "LA-CONFIG"
    assert error.details["unknown"] == unknown
    for name in unknown:
        assert name in error.message
    if meant is None:
        meant = {"instructons": "instructions", "sesion_store": "session_store"}
    assert error.details["did_you_mean"] == meant
    for wrong, right in meant.items():
        assert f"{right}= instead of {wrong}=" in error.hint


def test_unknown_run_keywords_get_the_same_did_you_mean() -> None:
    agent = LightAgent(model=ScriptedModel())
    for call in (agent.run, agent.astream):
        with pytest.raises(ConfigurationError) as info:
            call("q", stram=True)
        assert info.value.details["did_you_mean"] == {"stram": "stream"}


def test_controls_without_their_distribution_name_the_extra() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['lightagent_control'] = None\n"  # as if not installed
        "from lightagent import LightAgent, ScriptedModel\n"
        "print(LightAgent(model=ScriptedModel(['hi']), hooks=None).run('q'))\n"
        "for build in (lambda: LightAgent(model=ScriptedModel(), hooks=[print]),\n"
        "              lambda: LightAgent(model=ScriptedModel()).hooks,\n"
        "              lambda: __import__('lightagent').SecurityContext):\n"
        "    try:\n"
        "        build()\n"
        "    except ImportError as exc:\n"
        "        print(exc.code, exc.details['install'], sep='|')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "hi"
    assert lines[1:] == ["LA-MISSING-EXTRA|pip install 'lightagent-core[control]'"] * 3


def test_model_error_is_carried_or_returned_as_text() -> None:
    from lightagent import ModelError

    failing = ModelError("LA-503", "upstream down")
    agent = LightAgent(model=ScriptedModel([failing, failing, RuntimeError("socket closed")]))
    text = agent.run("q")
    assert text.startswith("[LA-503] upstream down")
    result = agent.run("q", result_format="object")
    assert result.error["code"] == "LA-503" and not result.success
    # an exception that is not a LightAgentError is classified, never a bare traceback
    result = agent.run("q", result_format="dict")
    assert result["error"]["code"] == "LA-PROVIDER"
    assert "RuntimeError: socket closed" in result["error"]["message"]


def test_trace_vocabulary_and_export(scripted_model: ScriptedModel) -> None:
    scripted_model.add("hi")
    agent = LightAgent(model=scripted_model)
    result = agent.run("hello", result_format="object", trace=True, metadata={"ticket": 7})
    types = [e["type"] for e in result.trace]
    assert types == ["run_start", "model_request", "model_response", "run_end"]
    request = result.trace[1]["data"]["request"]
    assert request["messages"][-1] == {"role": "user", "content": "hello"}
    assert result.trace[2]["data"]["message"] == {"role": "assistant", "content": "hi"}
    assert [e["seq"] for e in result.trace] == [1, 2, 3, 4]
    assert all(e["trace_id"] == result.trace_id for e in result.trace)
    assert agent.export_trace() == result.trace
    # metadata is recorded, never merged into the model request
    assert scripted_model.requests[0].options == {}
