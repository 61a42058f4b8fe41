"""Issue 28, item 11: the roadmap's names that were missing, each as what it means here."""

from __future__ import annotations

import lightagent
import pytest
from lightagent import HookDecision, LightAgent, ScriptedModel, SessionStore


def test_aliases_name_the_thing_that_exists() -> None:
    assert lightagent.HookResult is HookDecision
    assert lightagent.EventLog is SessionStore and lightagent.RunStore is SessionStore
    assert isinstance(lightagent.InMemorySessionStore(), lightagent.RunStore)
    from lightagent_control.capabilities import CapabilityProvider

    assert lightagent.CapabilityProvider is CapabilityProvider


def test_a_hook_may_return_a_hook_result() -> None:
    def shout(ctx):
        return lightagent.HookResult.replace({**ctx.payload, "content": "HI"})

    shout.phases = ("after_run",)  # type: ignore[attr-defined]
    agent = LightAgent(model=ScriptedModel(["hi"]), hooks=[shout])
    assert agent.run("hello") == "HI"


def test_distribution_names() -> None:
    review = pytest.importorskip("lightagent_review")
    skills = pytest.importorskip("lightagent_skills")
    devtools = pytest.importorskip("lightagent_devtools")
    assert lightagent.HumanApprovalTool is review.HumanApprovalHook
    assert lightagent.TraceRecorder is devtools.TraceRecorder
    assert lightagent.FileSystem is skills.FileSystem
    from lightagent import BaseCapabilityProvider, CapabilitySpec

    files = BaseCapabilityProvider([CapabilitySpec("fs.read", read=True)], name="files")
    assert isinstance(files, lightagent.FileSystem)  # a marker: any provider answers it


#: The names issue 28 found absent, and where each is importable now.
ISSUE_28_NAMES = {
    **dict.fromkeys(
        (
            "TraceRecorder HookResult EventLog RunStore FileSystem HumanApprovalTool "
            "ToolProviderAdapter MemoryProviderAdapter SkillProviderAdapter CapabilityProvider "
            "execute_python_code execute_python_file execute_python_code_stream"
        ).split(),
        "lightagent",
    ),
    "MCPProviderAdapter": "lightagent_mcp",
    "WorkflowProviderAdapter": "lightagent_flow",
}


def test_every_name_issue_28_listed_has_a_home() -> None:
    import importlib

    for name, module in ISSUE_28_NAMES.items():
        assert getattr(importlib.import_module(module), name) is not None, name
