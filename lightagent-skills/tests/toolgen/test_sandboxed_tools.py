"""A generated tool runs only in a sandbox provider: never in the host process, before or after review."""

from __future__ import annotations

import asyncio
import os
import sys
from types import CodeType

import pytest
from lightagent import ApprovalDecision, InMemoryReviewStore, LightAgent, ScriptedModel, tool
from lightagent.errors import PolicyError, ToolError
from lightagent_skills.toolgen import load_installed

MARK = "toolgen-canary-7c1e"

PROBE = f'''
MARK = "{MARK}"


def probe(word: str) -> list:
    """Where it runs: its mark and the process's hash of the word.

    Args:
        word: Any word.
    """
    return [MARK, hash(word)]
'''

TYPED = '''
from typing import Literal, Optional


def pick(items: list[str], unit: Literal["m", "km"] = "m", *, limit: Optional[int] = None) -> str:
    """Pick items.

    Args:
        items: The items.
        unit: The unit.
        limit: How many.
    """
    return ",".join(items[:limit]) + unit
'''


def fenced(source: str) -> str:
    return f"```python\n{source}```\n"


#: Code objects holding MARK that this process executed (an audit hook sees every exec).
EXECUTED: list[str] = []


def _holds(code: CodeType) -> bool:
    return any(c == MARK or (isinstance(c, CodeType) and _holds(c)) for c in code.co_consts)


def _audit(event: str, args: tuple) -> None:
    if event == "exec" and isinstance(args[0], CodeType) and _holds(args[0]):
        EXECUTED.append(args[0].co_filename)


sys.addaudithook(_audit)  # once per process; it only looks for this file's canary


def test_a_generated_tool_runs_in_the_sandbox_before_and_after_review(
    tmp_path, loopback_server, sandbox
) -> None:
    loopback_server.reply(
        fenced(PROBE),
        {"tool_calls": [{"name": "probe", "arguments": {"word": "w"}}]},
        "done",
    )
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, sandbox=sandbox
    )
    trials = []

    def reviewer(review):  # a trial run before deciding: in the sandbox too
        trials.append(review.trial(word="w"))
        return trials[-1][0] == MARK

    made = agent.create_tool("a probe", tools_directory=tmp_path, reviewer=reviewer)
    assert made.status == "registered" and len(sandbox.runs) == 1
    assert agent.run("probe it") == "done"
    assert len(sandbox.runs) == 2
    result = loopback_server.requests[2]["messages"][-1]["content"]
    assert MARK in result and str(hash("w")) not in result  # hash() is salted per process
    assert trials[0][1] != hash("w")
    assert all(run["pid"] != os.getpid() for run in sandbox.runs)
    assert EXECUTED == []  # the host never executed the module or the function
    assert not [name for name in sys.modules if name.startswith("lightagent_generated")]
    # what reached the sandbox: the approved source and the validated arguments
    assert repr(PROBE) in sandbox.runs[1]["script"] and '"word": "w"' in sandbox.runs[1]["script"]


def test_an_async_provider_serves_an_async_run(tmp_path, loopback_server, async_sandbox) -> None:
    loopback_server.reply(
        fenced(PROBE),
        {"tool_calls": [{"name": "probe", "arguments": {"word": "w"}}]},
        "done",
    )
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, sandbox=async_sandbox
    )

    async def main() -> str:
        await agent.acreate_tool("a probe", tools_directory=tmp_path, reviewer=lambda r: True)
        return await agent.arun("probe it")

    assert asyncio.run(main()) == "done"
    assert MARK in loopback_server.requests[2]["messages"][-1]["content"]
    assert len(async_sandbox.runs) == 1 and async_sandbox.runs[0]["pid"] != os.getpid()
    assert EXECUTED == []


def test_without_a_sandbox_a_generated_tool_never_runs(tmp_path, sandbox) -> None:
    agent = LightAgent(model=ScriptedModel([fenced(PROBE), fenced(PROBE)]))
    with pytest.raises(PolicyError) as err:
        agent.create_tool("a probe", tools_directory=tmp_path, reviewer=lambda r: True)
    assert err.value.code == "LA-SANDBOX" and "sandbox=" in err.value.hint
    store = InMemoryReviewStore()
    pending = agent.create_tool("a probe", tools_directory=tmp_path, store=store)  # nothing runs
    store.resolve(pending.request_id, ApprovalDecision.approve(reviewer_id="ana"))
    with pytest.raises(PolicyError) as err:
        agent.register_generated_tool(pending, approval_id=pending.request_id, store=store)
    assert err.value.code == "LA-SANDBOX" and agent.tools.get("probe") is None
    # the approval was not used up: with a sandbox the same approval registers the tool
    sandboxed = LightAgent(model=ScriptedModel(), sandbox=sandbox)
    done = sandboxed.register_generated_tool(pending, approval_id=pending.request_id, store=store)
    assert done.status == "registered"
    with pytest.raises(PolicyError) as err:
        load_installed("probe", tmp_path)
    assert err.value.code == "LA-SANDBOX"
    with pytest.raises(PolicyError) as err:
        agent.load_generated_tool("probe", tools_directory=tmp_path)
    assert err.value.code == "LA-SANDBOX"
    assert EXECUTED == []


def test_the_schema_is_read_from_the_source_and_arguments_are_checked_in_the_host(
    tmp_path, sandbox
) -> None:
    agent = LightAgent(model=ScriptedModel([fenced(TYPED)]), sandbox=sandbox)
    made = agent.create_tool("pick", tools_directory=tmp_path, reviewer=lambda r: True)
    generated = agent.tools.get("pick")
    namespace: dict = {}
    exec(TYPED, namespace)  # the same function, defined by the test, for comparison
    assert generated.parameters == tool(namespace["pick"]).parameters
    assert generated.description == "Pick items."
    assert generated(items=["a", "b", "c"], limit=2) == "a,bm"
    with pytest.raises(ToolError) as err:
        generated.prepare_arguments({"items": ["a"], "unit": "mile"})
    assert err.value.code == "LA-TOOL-ARGS"
    assert made.tool is generated and len(sandbox.runs) == 1


def test_an_installed_tool_reloads_into_the_sandbox(tmp_path, sandbox) -> None:
    LightAgent(model=ScriptedModel([fenced(TYPED)]), sandbox=sandbox).create_tool(
        "pick", tools_directory=tmp_path, reviewer=lambda r: True
    )
    loaded = LightAgent(model=ScriptedModel(), sandbox=sandbox).load_generated_tool(
        "pick", tools_directory=tmp_path
    )
    assert loaded(items=["x"], unit="km") == "xkm"
    assert load_installed("pick", tmp_path, sandbox=sandbox)(items=["y"]) == "ym"
    assert len(sandbox.runs) == 2


ASYNC_SEEDS_NOISY = {
    "async": "async def twice(n: int) -> int:\n    '''Twice n.'''\n    return 2 * n\n",
    "seeds tool_info": (
        "def twice(n):\n    return 2 * n\n\n"
        "twice.tool_info = {'tool_name': 'twice', 'tool_description': 'Twice n.', "
        "'tool_params': [{'name': 'n', 'description': 'A number', 'type': 'integer', "
        "'required': True}]}\n"
    ),
    "prints": "def twice(n: int) -> int:\n    '''Twice n.'''\n    print(n)\n    return 2 * n\n",
}


@pytest.mark.parametrize("kind", sorted(ASYNC_SEEDS_NOISY))
def test_async_seeds_style_and_printing_tools_run_in_the_sandbox(
    kind: str, tmp_path, sandbox
) -> None:
    agent = LightAgent(model=ScriptedModel([fenced(ASYNC_SEEDS_NOISY[kind])]), sandbox=sandbox)
    agent.create_tool("twice", tools_directory=tmp_path, reviewer=lambda r: True)
    assert agent.tools.get("twice")(n=21) == 42


#: case -> (source, tool_timeout, words in the error)
FAILING = {
    "raises": (
        "def fail(n: int) -> int:\n    '''Fail.'''\n    return 1 // n\n",
        60.0,
        "ZeroDivisionError",
    ),
    "never ends": (
        "def fail(n: int) -> int:\n    '''Fail.'''\n    while True:\n        n += 1\n",
        1.0,  # the loop never ends: it is stopped whatever the machine's speed
        "timed out",
    ),
}


@pytest.mark.parametrize("case", sorted(FAILING))
def test_a_failing_generated_tool_is_a_typed_tool_error(case: str, tmp_path, sandbox) -> None:
    source, timeout, words = FAILING[case]
    agent = LightAgent(model=ScriptedModel([fenced(source)]), sandbox=sandbox, tool_timeout=timeout)
    agent.create_tool("fail", tools_directory=tmp_path, reviewer=lambda r: True)
    with pytest.raises(ToolError) as err:
        agent.tools.get("fail")(n=0)
    assert err.value.code == "LA-TOOLGEN-RUN" and words in err.value.message
