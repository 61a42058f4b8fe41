"""Skills: SKILL.md folders by precedence, the skill tools over the wire, scripts only sandboxed and approved."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lightagent import (
    ApprovalDecision,
    InMemoryReviewStore,
    LightAgent,
    ScriptedModel,
    ScriptResult,
    SkillManager,
)
from lightagent.errors import ConfigurationError, LightAgentError, PolicyError


def skill(
    root: Path, folder: str, name: str | None, description: str | None, body: str = "", **extra: Any
) -> Path:
    path = root / folder
    path.mkdir(parents=True)
    meta = {"name": name, "description": description, **extra}
    lines = [f"{k}: {json.dumps(v)}" for k, v in meta.items() if v is not None]
    (path / "SKILL.md").write_text("---\n" + "\n".join(lines) + "\n---\n" + body, encoding="utf-8")
    return path


class SubprocessSandbox:
    """A test double for the sandbox seam: it runs the script, with no isolation at all."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, list[str]]] = []

    def run_script(
        self, script: Path, args: list[str], *, skill_dir: Path | None, timeout: float
    ) -> ScriptResult:
        self.runs.append((script.name, list(args)))
        done = subprocess.run(
            [sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout
        )
        return ScriptResult(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    user, project, agent_a, agent_b = (
        tmp_path / n for n in ("user", "project", "agent_a", "agent_b")
    )
    skill(user, "pdf", "pdf", "user-level pdf")
    skill(user, "notes", "notes", "Take notes.")
    skill(project, "pdf", "pdf", "project-level pdf")
    skill(agent_a, "pdf", "pdf", "agent pdf (first directory)")
    skill(agent_b, "pdf", "pdf", "agent pdf (second directory)", "Use the forms.\n")
    skill(agent_b, "broken", "broken", None)
    (agent_b / "bad-yaml").mkdir()
    (agent_b / "bad-yaml" / "SKILL.md").write_text("---\nname: [unclosed\n---\n", encoding="utf-8")
    return {"user": user, "project": project, "a": agent_a, "b": agent_b}


def test_precedence_agent_over_project_over_user_and_conflicts_reported(dirs, caplog) -> None:
    manager = SkillManager(
        [dirs["a"], dirs["b"]],
        project_directories=[dirs["project"]],
        user_directories=[dirs["user"]],
    )
    with caplog.at_level(logging.WARNING, logger="lightagent.skills"):
        found = {s.name: s for s in manager.discover_skills()}
    assert set(found) == {"pdf", "notes"}
    assert found["pdf"].description == "agent pdf (second directory)"  # later agent dir wins
    assert found["notes"].level == "user"
    (conflict,) = manager.list_conflicts()
    assert [s.description for s in conflict.shadowed] == [
        "agent pdf (first directory)",
        "project-level pdf",
        "user-level pdf",
    ]
    assert "skill conflict: skill 'pdf'" in caplog.text
    reasons = {Path(d["path"]).parent.name: d["reason"] for d in manager.diagnostics}
    assert "no description" in reasons["broken"]
    assert reasons["bad-yaml"].startswith("ParserError")


def test_the_model_uses_a_skill_through_its_tools_over_the_wire(tmp_path, loopback_server) -> None:
    root = tmp_path / "skills"
    pdf = skill(root, "pdf", "pdf-forms", "Fill in PDF forms.", "Read references/forms.md first.\n")
    (pdf / "references").mkdir()
    (pdf / "references" / "forms.md").write_text("Field A is the name.", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("s3cret", encoding="utf-8")
    loopback_server.reply(
        {"tool_calls": [{"name": "activate_skill", "arguments": {"name": "pdf-forms"}}]},
        {
            "tool_calls": [
                {
                    "name": "read_skill_reference",
                    "arguments": {"skill": "pdf-forms", "reference": "forms.md"},
                },
                {
                    "name": "read_skill_reference",
                    "arguments": {"skill": "pdf-forms", "reference": "../../secret.txt"},
                },
            ]
        },
        "Field A takes the name.",
    )
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, skills_directories=[root]
    )
    assert agent.run("fill the form") == "Field A takes the name."
    first, second, third = loopback_server.requests
    assert (
        "<name>pdf-forms</name><description>Fill in PDF forms.</description>"
        in first["messages"][0]["content"]
    )
    assert sorted(t["function"]["name"] for t in first["tools"]) == [
        "activate_skill",
        "list_skills",
        "read_skill_reference",
    ]  # no sandbox: no script tool
    activation = second["messages"][-1]["content"]
    assert activation.startswith("Read references/forms.md first.") and "forms.md" in activation
    results = [m["content"] for m in third["messages"] if m["role"] == "tool"][-2:]
    assert results[0] == "Field A is the name."
    assert "LA-SKILL-PATH" in results[1] and "s3cret" not in results[1]


def test_use_skills_false_leaves_the_block_and_the_tools_out(tmp_path) -> None:
    root = tmp_path / "skills"
    skill(root, "a", "a", "Skill A.")
    seen: list[Any] = []
    agent = LightAgent(
        model=ScriptedModel(lambda r: seen.append(r) or "ok"), skills_directories=[root]
    )
    agent.run("q", use_skills=False)
    assert seen[0].tools is None and "available_skills" not in seen[0].messages[0]["content"]
    agent.run("q")
    assert "available_skills" in seen[1].messages[0]["content"] and seen[1].tools


def test_auto_discover_off_waits_for_an_explicit_discovery(tmp_path) -> None:
    root = tmp_path / "skills"
    skill(root, "a", "a", "Skill A.")
    agent = LightAgent(
        model=ScriptedModel(["x", "y"]), skills_directories=[root], auto_discover_skills=False
    )
    assert agent.skill_manager.skills == {}
    agent.skill_manager.discover_skills()
    assert set(agent.skill_manager.skills) == {"a"}


def scripted_skill(root: Path) -> Path:
    folder = skill(root, "calc", "calc", "Adds numbers with a script.")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "add.py").write_text(
        "import sys\nprint(sum(int(a) for a in sys.argv[1:]))\n", encoding="utf-8"
    )
    return folder


RUN = {
    "tool_calls": [
        {
            "name": "execute_skill_script",
            "arguments": {"skill": "calc", "script": "add.py", "args": ["2", "3"]},
        }
    ]
}


def test_scripts_run_only_in_the_sandbox_and_after_approval(tmp_path) -> None:
    root = tmp_path / "skills"
    folder = scripted_skill(root)
    sandbox = SubprocessSandbox()
    store = InMemoryReviewStore()
    seen: list[Any] = []
    replies = [RUN, "first answer", RUN, "second answer", RUN, "third answer"]
    model = ScriptedModel(lambda r: seen.append(r) or replies.pop(0))
    agent = LightAgent(model=model, skills_directories=[root], sandbox=sandbox, approval=store)
    agent.run("add 2 and 3")
    pending = seen[1].messages[-1]["content"]
    assert "LA-APPROVAL-PENDING" in pending and sandbox.runs == []
    (request,) = store.list_pending()
    assert request.arguments["script_digest"].startswith("sha256:")
    store.resolve(request.request_id, ApprovalDecision.approve())
    agent.run("add 2 and 3", approval_id=request.request_id)
    assert json.loads(seen[3].messages[-1]["content"])["stdout"].strip() == "5"
    assert sandbox.runs == [("add.py", ["2", "3"])]
    # the script changes: the old approval no longer covers it
    (folder / "scripts" / "add.py").write_text("print('changed')\n", encoding="utf-8")
    agent.run("add 2 and 3", approval_id=request.request_id)
    assert "LA-APPROVAL" in seen[5].messages[-1]["content"] and len(sandbox.runs) == 1


def test_without_a_sandbox_or_approval_there_is_no_script_tool(tmp_path) -> None:
    root = tmp_path / "skills"
    scripted_skill(root)
    for kwargs in ({}, {"sandbox": SubprocessSandbox()}):
        seen: list[Any] = []
        agent = LightAgent(
            model=ScriptedModel(lambda r, seen=seen: seen.append(r) or "ok"),
            skills_directories=[root],
            **kwargs,
        )
        agent.run("q")
        assert "execute_skill_script" not in [t["function"]["name"] for t in seen[0].tools]
    with pytest.raises(PolicyError) as err:
        SkillManager([root]).execute_script("calc", "add.py", ["1"])
    assert err.value.code == "LA-SANDBOX"
    # your own code may run a script through a sandbox directly
    result = SkillManager([root], sandbox=SubprocessSandbox()).execute_script(
        "calc", "add.py", ["1", "2"]
    )
    assert result.stdout.strip() == "3"


def test_enable_unsafe_python_needs_a_sandbox_and_approval_and_is_approved_per_code(
    tmp_path,
) -> None:
    with pytest.raises(ConfigurationError):
        LightAgent(model=ScriptedModel(), enable_unsafe_python=True)
    with pytest.raises(ConfigurationError):
        LightAgent(model=ScriptedModel(), enable_unsafe_python=True, sandbox=SubprocessSandbox())
    reviewed: list[Any] = []

    def reviewer(request: Any) -> bool:
        reviewed.append(request.arguments)
        return "import os" not in request.arguments["code"]

    sandbox = SubprocessSandbox()
    code_ok = {"tool_calls": [{"name": "execute_python_code", "arguments": {"code": "print(6*7)"}}]}
    code_bad = {"tool_calls": [{"name": "execute_python_code", "arguments": {"code": "import os"}}]}
    seen: list[Any] = []
    replies = [code_ok, code_bad, "done"]
    agent = LightAgent(
        model=ScriptedModel(lambda r: seen.append(r) or replies.pop(0)),
        enable_unsafe_python=True,
        sandbox=sandbox,
        approval=reviewer,
    )
    assert agent.run("compute") == "done"
    assert json.loads(seen[1].messages[-1]["content"])["stdout"].strip() == "42"
    assert "LA-APPROVAL" in seen[2].messages[-1]["content"]
    assert len(sandbox.runs) == 1 and [r["code"] for r in reviewed] == ["print(6*7)", "import os"]


def test_missing_pyyaml_is_a_typed_error(tmp_path, monkeypatch) -> None:
    root = tmp_path / "skills"
    skill(root, "a", "a", "Skill A.")
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(LightAgentError) as err:
        SkillManager([root]).discover_skills()
    assert err.value.code == "LA-MISSING-EXTRA" and "lightagent-core[skills]" in err.value.hint


def test_symlinked_reference_out_of_the_skill_is_refused(tmp_path) -> None:
    root = tmp_path / "skills"
    folder = skill(root, "a", "a", "Skill A.")
    (folder / "references").mkdir()
    (tmp_path / "outside.md").write_text("private", encoding="utf-8")
    (folder / "references" / "link.md").symlink_to(tmp_path / "outside.md")
    manager = SkillManager([root])
    with pytest.raises(PolicyError) as err:
        manager.read_reference("a", "link.md")
    assert err.value.code == "LA-SKILL-PATH"
    assert manager.files("a", "references") == []


@pytest.mark.parametrize("folder_name", ["references", "assets", "scripts"])
def test_a_symlinked_folder_out_of_the_skill_is_refused(tmp_path, folder_name) -> None:
    root = tmp_path / "skills"
    folder = skill(root, "a", "a", "Skill A.")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("private", encoding="utf-8")
    (folder / folder_name).symlink_to(outside, target_is_directory=True)
    manager = SkillManager([root])
    read = {
        "references": manager.read_reference,
        "assets": manager.read_asset,
        "scripts": manager.script_path,
    }[folder_name]
    with pytest.raises(PolicyError) as err:
        read("a", "secret.md")
    assert err.value.code == "LA-SKILL-PATH" and "private" not in str(err.value)
    assert manager.files("a", folder_name) == []


def test_an_asset_file_linked_out_or_dotted_out_is_refused(tmp_path) -> None:
    root = tmp_path / "skills"
    folder = skill(root, "a", "a", "Skill A.")
    (folder / "assets").mkdir()
    (tmp_path / "outside.bin").write_bytes(b"private")
    (folder / "assets" / "link.bin").symlink_to(tmp_path / "outside.bin")
    manager = SkillManager([root])
    for name in ("link.bin", "../../outside.bin", "../SKILL.md", "/etc/hostname"):
        with pytest.raises(PolicyError) as err:
            manager.read_asset("a", name)
        assert err.value.code == "LA-SKILL-PATH", name


def test_a_symlink_within_the_skill_still_reads(tmp_path) -> None:
    root = tmp_path / "skills"
    folder = skill(root, "a", "a", "Skill A.")
    (folder / "docs").mkdir()
    (folder / "docs" / "guide.md").write_text("the guide", encoding="utf-8")
    (folder / "references").symlink_to(folder / "docs", target_is_directory=True)
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.txt").symlink_to(folder / "docs" / "guide.md")
    manager = SkillManager([root])
    assert manager.read_reference("a", "guide.md") == "the guide"
    assert manager.read_asset("a", "logo.txt") == b"the guide"
    assert manager.files("a", "references") == ["guide.md"]
    assert manager.files("a", "assets") == ["logo.txt"]


def test_the_skill_tool_refuses_a_symlinked_references_folder(tmp_path) -> None:
    root = tmp_path / "skills"
    folder = skill(root, "a", "a", "Skill A.")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("s3cret", encoding="utf-8")
    (folder / "references").symlink_to(outside, target_is_directory=True)
    call = {"name": "read_skill_reference", "arguments": {"skill": "a", "reference": "secret.md"}}
    agent = LightAgent(
        model=ScriptedModel([{"tool_calls": [call]}, "done"]), skills_directories=[root]
    )
    result = agent.run("read it", result_format="object")
    output = result.tool_calls[0]["output"]
    assert "LA-SKILL-PATH" in output and "s3cret" not in output


def test_a_skill_md_linked_out_of_its_folder_is_skipped(tmp_path) -> None:
    root = tmp_path / "skills"
    (root / "evil").mkdir(parents=True)
    outside = tmp_path / "notes.md"
    outside.write_text("---\nname: evil\ndescription: Host notes.\n---\nprivate notes\n")
    (root / "evil" / "SKILL.md").symlink_to(outside)
    manager = SkillManager([root])
    assert manager.skills == {}
    (diagnostic,) = manager.diagnostics
    assert diagnostic["path"].endswith("SKILL.md") and "outside" in diagnostic["reason"]


@pytest.mark.parametrize("name", ["loop.md", "a" * 5000, "a/" * 3000 + "x"])
def test_a_looping_or_overlong_reference_name_is_a_typed_refusal(tmp_path, name) -> None:
    root = tmp_path / "skills"
    folder = skill(root, "a", "a", "Skill A.")
    (folder / "references").mkdir()
    (folder / "references" / "loop.md").symlink_to(folder / "references" / "loop.md")
    manager = SkillManager([root])
    with pytest.raises(LightAgentError) as err:
        manager.read_reference("a", name)
    assert err.value.code == "LA-SKILL-PATH"
    assert manager.files("a", "references") == []
