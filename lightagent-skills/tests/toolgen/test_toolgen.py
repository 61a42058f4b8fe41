"""create_tool: model-written source is quarantined, scanned, reviewed (bound to its hash), then run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lightagent import ApprovalDecision, InMemoryReviewStore, LightAgent, ScriptedModel
from lightagent.errors import (
    ApprovalError,
    LightAgentError,
    ModelError,
    PolicyError,
    ValidationError,
)
from lightagent_skills.toolgen import load_installed, scan_source

SAFE = '''
import math

ROUNDING = 3


def circle_area(radius: float) -> float:
    """Area of a circle.

    Args:
        radius: The radius, in any unit.
    """
    return round(math.pi * radius**2, ROUNDING)
'''

UNSAFE = '''
import subprocess
open("CANARY", "w").write("ran")


def run(cmd: str) -> str:
    """Run a command."""
    return subprocess.check_output(cmd, shell=True).decode()
'''


def fenced(source: str) -> str:
    return f"Here is the tool:\n```python\n{source}```\n"


def test_an_approved_tool_is_registered_and_used_over_the_wire(
    tmp_path, loopback_server, sandbox
) -> None:
    tools = tmp_path / "tools"
    loopback_server.reply(
        fenced(SAFE),
        {"tool_calls": [{"name": "circle_area", "arguments": {"radius": 2}}]},
        "The area is 12.566.",
    )
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, sandbox=sandbox
    )
    reviews = []
    made = agent.create_tool(
        "A tool for the area of a circle.",
        tools_directory=tools,
        reviewer=lambda review: reviews.append(review) or True,
    )
    assert made.status == "registered" and made.name == "circle_area"
    (review,) = reviews
    assert review.source == SAFE and review.signature["parameters"][0]["annotation"] == "float"
    quarantined = list((tools / ".quarantine").glob("circle_area-*.py"))
    assert len(quarantined) == 1 and review.sha256[:12] in quarantined[0].name
    assert json.loads((tools / "circle_area.approval.json").read_text())["sha256"] == made.sha256
    assert "system" in loopback_server.requests[0]["messages"][0]["role"]
    assert agent.run("area of a circle of radius 2?") == "The area is 12.566."
    assert loopback_server.requests[2]["messages"][-1]["content"] == "12.566"


def test_unsafe_source_is_refused_and_never_runs(tmp_path, monkeypatch, sandbox) -> None:
    monkeypatch.chdir(tmp_path)
    agent = LightAgent(model=ScriptedModel([fenced(UNSAFE)]), sandbox=sandbox)
    approved = []
    with pytest.raises(PolicyError) as err:
        agent.create_tool("run shell commands", reviewer=lambda r: approved.append(r) or True)
    assert err.value.code == "LA-TOOLGEN-UNSAFE"
    messages = [f["message"] for f in err.value.details["findings"]]
    assert "import of 'subprocess' refused: it reaches processes" in messages
    assert any("top-level Expr statement runs at import" in m for m in messages)
    assert approved == [] and sandbox.runs == [] and not (tmp_path / "CANARY").exists()
    assert (
        Path(err.value.details["path"]).read_text() == UNSAFE
    )  # kept in quarantine, for inspection
    assert agent.tools.get("run") is None


def test_review_through_a_store_is_bound_to_the_file_hash(tmp_path, sandbox) -> None:
    store = InMemoryReviewStore()
    agent = LightAgent(model=ScriptedModel([fenced(SAFE)]), sandbox=sandbox)
    pending = agent.create_tool("circle area", tools_directory=tmp_path, store=store)
    assert pending.status == "pending" and agent.tools.get("circle_area") is None
    request = store.get_request(pending.request_id)
    assert request.action == "create_tool" and request.arguments["sha256"] == pending.sha256
    with pytest.raises(ApprovalError) as err:
        agent.register_generated_tool(pending, approval_id=pending.request_id, store=store)
    assert err.value.code == "LA-APPROVAL-PENDING"
    store.resolve(pending.request_id, ApprovalDecision.approve(reviewer_id="ana"))
    # the quarantined file is edited after the review was asked for: the approval does not cover it
    path = Path(pending.path)
    original = path.read_bytes()
    path.write_text(SAFE.replace("ROUNDING = 3", "ROUNDING = 1"), encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        agent.register_generated_tool(pending, approval_id=pending.request_id, store=store)
    assert err.value.code == "LA-TOOLGEN-HASH"
    path.write_bytes(original)
    done = agent.register_generated_tool(pending, approval_id=pending.request_id, store=store)
    assert done.status == "registered" and agent.tools.get("circle_area") is not None
    with pytest.raises(ApprovalError) as err:  # an approval is used once
        agent.register_generated_tool(pending, approval_id=pending.request_id, store=store)
    assert err.value.code == "LA-APPROVAL-REPLAY"


def test_an_installed_tool_reloads_only_with_its_approved_bytes(tmp_path, sandbox) -> None:
    agent = LightAgent(model=ScriptedModel([fenced(SAFE)]), sandbox=sandbox)
    agent.create_tool("circle area", tools_directory=tmp_path, reviewer=lambda r: True)
    fresh = LightAgent(model=ScriptedModel(), sandbox=sandbox)
    tool = fresh.load_generated_tool("circle_area", tools_directory=tmp_path)
    assert tool(radius=1.0) == 3.142
    (tmp_path / "circle_area.py").write_text(SAFE + "\nEXTRA = 1\n", encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        load_installed("circle_area", tmp_path, sandbox=sandbox)
    assert err.value.code == "LA-TOOLGEN-HASH"


def test_rejection_schema_problems_and_empty_answers_are_typed(tmp_path, sandbox) -> None:
    agent = LightAgent(model=ScriptedModel([fenced(SAFE)]), sandbox=sandbox)
    with pytest.raises(PolicyError) as err:
        agent.create_tool(
            "x", tools_directory=tmp_path, reviewer=lambda r: ApprovalDecision.reject("no")
        )
    assert err.value.code == "LA-TOOLGEN-REJECTED" and agent.tools.get("circle_area") is None
    two = "def a(x: int) -> int:\n    '''A.'''\n    return x\n\ndef b(y) -> int:\n    '''B.'''\n    return y\n"
    agent = LightAgent(model=ScriptedModel([fenced(two)]))
    with pytest.raises(ValidationError) as verr:
        agent.create_tool("x", tools_directory=tmp_path)
    assert verr.value.code == "LA-TOOLGEN-SCHEMA"
    agent = LightAgent(model=ScriptedModel(["I cannot write that."]))
    with pytest.raises(LightAgentError):
        agent.create_tool("x", tools_directory=tmp_path)
    agent = LightAgent(model=ScriptedModel(["```python\n```"]))
    with pytest.raises(ModelError) as merr:
        agent.create_tool("x", tools_directory=tmp_path)
    assert merr.value.code == "LA-TOOLGEN-OUTPUT"
    agent = LightAgent(model=ScriptedModel(), sandbox=sandbox)
    with pytest.raises(ApprovalError):
        agent.register_generated_tool(tmp_path / "whatever.py")
    with pytest.raises(ValidationError) as verr:
        agent.register_generated_tool(tmp_path / "whatever.py", reviewer=lambda r: True)
    assert verr.value.code == "LA-TOOLGEN-SCHEMA"


def test_acreate_tool_with_an_async_reviewer(tmp_path, sandbox) -> None:
    async def reviewer(review: object) -> bool:
        await asyncio.sleep(0)
        return True

    agent = LightAgent(model=ScriptedModel([fenced(SAFE)]), sandbox=sandbox)
    made = asyncio.run(
        agent.acreate_tool("circle area", tools_directory=tmp_path, reviewer=reviewer)
    )
    assert made.status == "registered"


ESCAPES = {
    "typing re-exports sys": "import typing\ndef f(x: int) -> int:\n    '''F.'''\n    return typing.sys.maxsize\n",
    "private module attribute": "import random\ndef f(x: int) -> int:\n    '''F.'''\n    return random._os.getpid()\n",
    "dunder walk": "def f(x: int) -> int:\n    '''F.'''\n    return ().__class__.__bases__[0].__subclasses__()\n",
    "getattr": "def f(x: str) -> str:\n    '''F.'''\n    return getattr(x, 'upper')()\n",
    "decorator": "import functools\n@functools.lru_cache\ndef f(x: int) -> int:\n    '''F.'''\n    return x\n",
    "default runs code": "import math\ndef f(x: float = math.sqrt(2)) -> float:\n    '''F.'''\n    return x\n",
    "class": "class T:\n    pass\ndef f(x: int) -> int:\n    '''F.'''\n    return x\n",
    "module as a value": "import json\ndef f(x: int) -> int:\n    '''F.'''\n    j = json\n    return x\n",
    "os.path": "import os.path\ndef f(x: str) -> bool:\n    '''F.'''\n    return os.path.exists(x)\n",
    "star import": "from math import *\ndef f(x: float) -> float:\n    '''F.'''\n    return x\n",
    "frame escape": "def f(x: int) -> int:\n    '''F.'''\n    g = (i for i in [])\n    return g.gi_frame.f_back\n",
    "annotation runs code": "def f(x: print('hi')) -> int:\n    '''F.'''\n    return 1\n",
    "top-level if": "if True:\n    X = 1\ndef f(x: int) -> int:\n    '''F.'''\n    return x\n",
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_the_scan_refuses_escapes(name: str) -> None:
    report = scan_source(ESCAPES[name])
    assert not report.ok, name


def test_the_seeds_tool_info_style_passes_the_scan() -> None:
    source = (
        "def get_weather(city_name):\n    return 'sunny'\n\n"
        "get_weather.tool_info = {'tool_name': 'get_weather', 'tool_description': 'Weather.', "
        "'tool_params': [{'name': 'city_name', 'description': 'City', 'type': 'string', 'required': True}]}\n"
    )
    report = scan_source(source)
    assert report.ok, report.findings
    assert report.signature.tool_info["tool_name"] == "get_weather"
