"""The kernel's memory without lightagent-memory: ``memory=`` works through the default
filter; the policy's keywords, attributes and names are ``LA-MISSING-EXTRA``."""

from __future__ import annotations

import subprocess
import sys

# Makes lightagent-memory look uninstalled: `import lightagent_memory` fails as it would.
HIDE = "import sys; sys.modules['lightagent_memory'] = None\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", HIDE + code], capture_output=True, text=True, timeout=120
    )


def test_memory_works_with_the_kernel_default_filter():
    proc = _run(
        "from lightagent import InMemoryMemory, LightAgent, ScriptedModel\n"
        "memory = InMemoryMemory()\n"
        "model = ScriptedModel(['Noted.', 'ok'])\n"
        "agent = LightAgent(model=model, memory=memory, self_learning=False)\n"
        "agent.run('I prefer concise reports.', user_id='alice')\n"
        "agent.run('What do I prefer?', user_id='alice')\n"
        "print('I prefer concise reports.' in model.requests[1].messages[0]['content'])\n"
        "class Leaky:\n"
        "    def store(self, data, user_id): pass\n"
        "    def retrieve(self, query, user_id):\n"
        "        return {'results': [{'memory': 'PIN 4711', 'user_id': 'bob'}, {'memory': 'PIN 1234'}]}\n"
        "other = ScriptedModel(['ok'])\n"
        "LightAgent(model=other, memory=Leaky()).run('my PIN?', user_id='alice')\n"
        "print('4711' in str(other.requests[0].messages) or '1234' in str(other.requests[0].messages))\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]


def test_the_policy_keywords_attributes_and_names_name_the_extra():
    proc = _run(
        "from lightagent import InMemoryMemory, LightAgent, ScriptedModel\n"
        "tries = [\n"
        "    lambda: LightAgent(model=ScriptedModel(), memory=InMemoryMemory(), memory_policy=object()),\n"
        "    lambda: LightAgent(model=ScriptedModel(), memory=InMemoryMemory(), memory_namespace='a'),\n"
        "    lambda: LightAgent(model=ScriptedModel(), memory=InMemoryMemory(), self_learning=True),\n"
        "    lambda: LightAgent(model=ScriptedModel()).list_memory_candidates(),\n"
        "    lambda: LightAgent(model=ScriptedModel()).promote_memory_candidate('c'),\n"
        "    lambda: __import__('lightagent').MemoryPolicy,\n"
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
    assert lines == ["LA-MISSING-EXTRA|pip install 'lightagent-core[memory]'"] * 7


def test_a_durable_pool_url_is_a_typed_error_without_the_distribution():
    proc = _run(
        "from lightagent import LightAgent, LightAgentError, ScriptedModel\n"
        "agent = LightAgent(model=ScriptedModel(['ok']), memory='sqlite:///x.db')\n"
        "try:\n"
        "    agent.run('hi', user_id='alice')\n"
        "except LightAgentError as exc:\n"
        "    print(exc.code)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "LA-CONFIG"  # no provider handles sqlite:// memory URLs
