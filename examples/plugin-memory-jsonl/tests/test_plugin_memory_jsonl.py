"""lightagent-plugin-memory-jsonl passes the memory contract and serves an agent by name."""

import pytest
from lightagent import LightAgent, LightAgentError
from lightagent.plugins import PluginHost, reset_host
from lightagent_contracts.suites.memory import MemoryContract
from lightagent_plugin_memory_jsonl import plugin
from lightagent_plugin_memory_jsonl.plugin import JsonlMemory


class TestJsonlMemoryContract(MemoryContract):
    @pytest.fixture
    def make_memory(self, tmp_path):
        counter = iter(range(1000))
        return lambda: JsonlMemory(tmp_path / f"memories-{next(counter)}.jsonl")


@pytest.fixture
def host():
    # the backend is this plugin's; memory= itself is lightagent-memory's
    from lightagent_memory import plugin as memory

    plugins = [("lightagent-plugin-memory-jsonl", plugin), ("lightagent-memory", memory)]
    reset_host(PluginHost(entry_points=False, plugins=plugins))
    yield
    reset_host(None)


def test_an_agent_remembers_across_agents_by_name(host, loopback_server, tmp_path):
    path = tmp_path / "memories.jsonl"
    loopback_server.reply("Noted.", "You like your reports short.")
    first = LightAgent(
        model="loopback-model",
        api_key="test",
        base_url=loopback_server.base_url,
        memory=("jsonl-memory", {"path": str(path)}),
    )
    first.run("I like short reports.", user_id="ada")
    second = LightAgent(  # a new agent, as after a restart: the file is the memory
        model="loopback-model",
        api_key="test",
        base_url=loopback_server.base_url,
        memory=("jsonl-memory", {"path": str(path)}),
    )
    assert second.run("How do I like my reports?", user_id="ada") == "You like your reports short."
    assert "I like short reports." in loopback_server.requests[1]["messages"][0]["content"]


def test_missing_configuration_names_the_key(host):
    with pytest.raises(LightAgentError) as info:
        LightAgent(model="m", api_key="k", memory="jsonl-memory").run("x")
    assert info.value.code == "LA-CONFIG"
    assert "'jsonl-memory'" in info.value.message and "'path'" in info.value.message
