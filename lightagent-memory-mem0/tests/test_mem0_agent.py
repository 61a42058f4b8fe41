"""An agent remembering through mem0, all on 127.0.0.1: the agent's model, mem0's LLM and
embeddings on the loopback server, Qdrant embedded; telemetry off and no network."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest
from lightagent import LightAgent, LightAgentError, SecurityContext
from lightagent.plugins import PluginHost, reset_host
from lightagent_memory_mem0 import Mem0Memory, mem0_user_id

EXTRACTOR = "mem0-extractor"  # the model conftest routes to echo_facts


@pytest.fixture
def mem0(server, mem0_options):
    def make(**kwargs):
        kwargs.setdefault("infer", True)
        return Mem0Memory(base_url=server.base_url, **mem0_options, **kwargs)

    return make


def _agent(server, memory, **kwargs):
    return LightAgent(
        model="loopback-model", api_key="k", base_url=server.base_url, memory=memory, **kwargs
    )


def _system(request):
    return request["messages"][0]["content"]


@pytest.mark.parametrize("mode", ["run", "arun", "astream"])
def test_an_agent_remembers_through_mem0(server, mem0, mode):
    memory = mem0()
    agent = _agent(server, memory, memory_namespace="tenant-a")
    server.reply("Noted.", "Teal, as you said.")
    agent.run("My favourite colour is teal.", user_id="alice")
    query = "What is my favourite colour?"
    if mode == "run":
        agent.run(query, user_id="alice")
    elif mode == "arun":
        asyncio.run(agent.arun(query, user_id="alice"))
    else:

        async def consume():
            return [c async for c in agent.astream(query, user_id="alice")]

        asyncio.run(consume())
    agent_calls = [r for r in server.requests if r["model"] == "loopback-model"]
    extraction = [r for r in server.requests if r["model"] == EXTRACTOR]
    assert "My favourite colour is teal." in _system(agent_calls[1])
    assert extraction, "mem0's LLM extracted the facts (infer=True)"
    assert server.embedding_requests, "mem0 embedded through the loopback server"
    stored = memory.retrieve("favourite colour", "tenant-a:alice")["results"]
    assert stored and all(r["user_id"] == "tenant-a:alice" for r in stored)
    assert (
        stored[0]["metadata"]["source"] == "user"
        and stored[0]["metadata"]["agent_name"] == agent.name
    )


def test_tenants_and_lookalike_users_stay_apart_in_mem0(server, mem0):
    memory = mem0(infer=False)
    server.reply("ok", "ok", "ok", "ok")
    _agent(server, memory, memory_namespace="tenant-a").run(
        "My locker code is 4711.", user_id="alice"
    )
    for namespace, user in (("tenant-b", "alice"), ("tenant-a", "Alice"), ("tenant-a", "*")):
        _agent(server, memory, memory_namespace=namespace).run(
            "What is my locker code?", user_id=user
        )
    prompts = [_system(r) for r in server.requests if r["model"] == "loopback-model"][1:]
    assert len(prompts) == 3 and not any("4711" in p for p in prompts), prompts


def test_the_security_contexts_tenant_scopes_the_mem0_id(server, mem0):
    memory = mem0(infer=False)
    server.reply("ok", "ok", "ok", "ok")

    def agent(tenant):
        context = None if tenant is None else SecurityContext(tenant_id=tenant)
        return _agent(server, memory, security_context=context)

    agent("evil").run("The vault code is 4711.", user_id="alice")
    for tenant in ("acme", None, "evil"):
        agent(tenant).run("What is the vault code?", user_id="alice")
    prompts = [_system(r) for r in server.requests if r["model"] == "loopback-model"][1:]
    assert ["4711" in p for p in prompts] == [False, False, True], prompts
    stored = memory.retrieve("vault code", "tenant%3Devil:alice")["results"]
    assert stored and {r["metadata"]["tenant_id"] for r in stored} == {"evil"}
    plain = memory.retrieve("vault code", "alice")["results"]  # the run without a tenant's
    assert plain and not any("4711" in r["memory"] or "tenant_id" in r["metadata"] for r in plain)


def test_mem0_ids_are_hashes_so_no_id_reaches_another_users_records(mem0):
    memory = mem0(infer=False)
    memory.store("Bob's PIN is 1234.", "bob")
    for hostile in ("*", "%", "", " ", "bob ", " bob", "BOB", "b\x00ob"):
        assert memory.retrieve("PIN", hostile)["results"] == [], hostile
    assert mem0_user_id("bob") != mem0_user_id("bob ") and " " not in mem0_user_id(" ")
    raw = memory.memory.search("PIN", filters={"user_id": mem0_user_id("bob")})["results"]
    assert raw and raw[0]["metadata"]["la_user_id"] == "bob", "the owner is kept in metadata"


def test_a_result_recorded_for_someone_else_is_dropped(mem0):
    memory = mem0(infer=False)
    memory.memory.add(
        "Planted under bob's mem0 id.",
        user_id=mem0_user_id("bob"),
        metadata={"la_user_id": "mallory", "source": "user"},
        infer=False,
    )
    assert memory.retrieve("planted", "bob")["results"] == []


def test_memories_survive_a_restart_on_disk(mem0, tmp_path):
    first = mem0(infer=False, path=tmp_path / "mem0")
    first.store("The spare key is under the blue pot.", "carol", metadata={"source": "user"})
    first.close()
    second = mem0(infer=False, path=tmp_path / "mem0")
    texts = [r["memory"] for r in second.retrieve("spare key", "carol")["results"]]
    second.close()
    assert texts == ["The spare key is under the blue pot."]


def test_an_unreachable_endpoint_is_a_typed_error_and_the_run_goes_on(server, mem0_options):
    dead = Mem0Memory(base_url="http://127.0.0.1:9/v1", infer=False, **mem0_options)
    with pytest.raises(LightAgentError) as info:
        dead.retrieve("anything", "alice")
    assert info.value.code == "LA-MEMORY"
    server.reply("fine")
    result = _agent(server, dead).run(
        "hi there", user_id="alice", result_format="object", trace=True
    )
    assert result.content == "fine" and result.error is None
    stages = [e["data"]["stage"] for e in result.trace if e["type"] == "error"]
    assert stages == ["memory_retrieve", "memory_write"]


def test_bad_configuration_is_refused_typed():
    for kwargs in (
        {"limit": 0},
        {"embedding_dims": -1},
        {"memory": object()},
        {"memory": 1, "config": {}},
    ):
        with pytest.raises(LightAgentError) as info:
            Mem0Memory(**kwargs)
        assert info.value.code == "LA-CONFIG", kwargs
    with pytest.raises(LightAgentError) as info:
        Mem0Memory(config={"vector_store": {"provider": "no-such-store"}}).retrieve("x", "u")
    assert info.value.code == "LA-CONFIG"


def test_memory_mem0_works_once_the_plugin_is_installed(server, mem0_options):
    bare = PluginHost(entry_points=False)
    reset_host(bare)
    try:
        # memory= itself is lightagent-memory's
        with pytest.raises(LightAgentError) as info:
            LightAgent(model="m", api_key="k", base_url=server.base_url, memory="mem0")
        assert info.value.code == "LA-MISSING-EXTRA" and "[memory]" in info.value.hint
        reset_host(PluginHost(environ={"LIGHTAGENT_LOAD_PLUGINS": "lightagent-memory"}))
        with pytest.raises(LightAgentError) as info:
            LightAgent(model="m", api_key="k", base_url=server.base_url, memory="mem0").run("x")
        assert info.value.code == "LA-CONFIG" and "mem0" in info.value.message
        reset_host(
            PluginHost(
                environ={"LIGHTAGENT_LOAD_PLUGINS": "lightagent-memory,lightagent-memory-mem0"}
            )
        )
        config = {"base_url": server.base_url, "infer": False, **mem0_options}
        agent = _agent(server, ("mem0", config))
        server.reply("Noted.")
        agent.run("I live in Lisbon.", user_id="dora")
        assert isinstance(agent.memory, Mem0Memory)
        assert agent.memory.retrieve("Lisbon", "dora")["results"]
    finally:
        reset_host(None)


CHECK = r"""
import json, sys
import lightagent, lightagent_memory_mem0
from lightagent_memory_mem0 import Mem0Memory
Mem0Memory(base_url="http://127.0.0.1:9/v1", api_key="k", infer=False)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("mem0", "qdrant_client", "openai"))))
"""


def test_importing_and_constructing_load_no_heavy_module(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHECK)],
        capture_output=True,
        text=True,
        env={**os.environ, "MEM0_DIR": str(tmp_path)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [], "mem0 loads on first use only"


def test_telemetry_is_off_unless_asked_for(monkeypatch, mem0):
    from lightagent_memory_mem0.memory import _import_mem0

    mem0(infer=False).retrieve("warm up", "u")  # mem0 is imported by now
    monkeypatch.delenv("MEM0_TELEMETRY", raising=False)
    _import_mem0()
    assert os.environ["MEM0_TELEMETRY"] == "False"
    import mem0.memory.main as main
    import mem0.memory.telemetry as telemetry

    assert telemetry.MEM0_TELEMETRY is False and main.MEM0_TELEMETRY is False
    monkeypatch.setenv("MEM0_TELEMETRY", "True")
    _import_mem0()
    assert os.environ["MEM0_TELEMETRY"] == "True", "an explicit choice is the user's"
