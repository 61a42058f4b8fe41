"""The kernel without lightagent-memory: an agent without memory runs; ``memory=`` and the
policy's keywords, attributes and names are ``LA-MISSING-EXTRA`` naming the memory extra."""

from __future__ import annotations

import subprocess
import sys

# Makes lightagent-memory look uninstalled: `import lightagent_memory` fails as it would.
HIDE = "import sys; sys.modules['lightagent_memory'] = None\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", HIDE + code], capture_output=True, text=True, timeout=120
    )


def test_an_agent_without_memory_runs():
    proc = _run(
        "from lightagent import LightAgent, ScriptedModel\n"
        "model = ScriptedModel(['first', 'second'])\n"
        "agent = LightAgent(model=model, memory=None, self_learning=False)\n"
        "result = agent.run('hi', user_id='alice', trace=True, result_format='object')\n"
        "print(result.content, agent.run('again', user_id='alice'))\n"
        "print(sorted({e['type'] for e in result.trace}))\n"
    )
    assert proc.returncode == 0, proc.stderr
    first, events = proc.stdout.strip().splitlines()
    assert first == "first second"
    assert "memory" not in events


def test_memory_and_the_policy_keywords_attributes_and_names_name_the_extra():
    proc = _run(
        "from lightagent import InMemoryMemory, LightAgent, ScriptedModel\n"
        "tries = [\n"
        "    lambda: LightAgent(model=ScriptedModel(), memory=InMemoryMemory()),\n"
        "    lambda: LightAgent(model=ScriptedModel(), memory='in-memory'),\n"
        "    lambda: LightAgent(model=ScriptedModel(), memory='sqlite:///x.db'),\n"
        "    lambda: LightAgent(model=ScriptedModel(), memory=InMemoryMemory(), memory_policy=object()),\n"
        "    lambda: LightAgent(model=ScriptedModel(), memory_namespace='a'),\n"
        "    lambda: LightAgent(model=ScriptedModel(), self_learning=True),\n"
        "    lambda: LightAgent(model=ScriptedModel()).memory,\n"
        "    lambda: LightAgent(model=ScriptedModel()).memory_filter,\n"
        "    lambda: LightAgent(model=ScriptedModel()).list_memory_candidates(),\n"
        "    lambda: LightAgent(model=ScriptedModel()).promote_memory_candidate('c'),\n"
        "    lambda: __import__('lightagent').MemoryPolicy,\n"
        "    lambda: __import__('lightagent').DefaultMemoryFilter,\n"
        "    lambda: __import__('lightagent').MemoryFilter,\n"
        "    lambda: __import__('lightagent').SharedMemoryPool,\n"
        "]\n"
        "for attempt in tries:\n"
        "    try:\n"
        "        attempt()\n"
        "    except ImportError as exc:\n"
        "        print(exc.code, exc.details['install'], sep='|')\n"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines == ["LA-MISSING-EXTRA|pip install 'lightagent-core[memory]'"] * 14


def test_the_memory_seam_stays_in_the_kernel():
    proc = _run(
        "from lightagent import InMemoryMemory, MemoryProtocol\n"
        "memory = InMemoryMemory()\n"
        "memory.store('I like tea.', 'alice')\n"
        "print(isinstance(memory, MemoryProtocol), memory.retrieve('tea', 'alice')['results'][0]['memory'])\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True I like tea."
