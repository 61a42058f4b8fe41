"""lightagent-plugin-notes passes the retrieval contract and serves an agent by name."""

import json

import pytest
from lightagent import LightAgent, LightAgentError
from lightagent.plugins import PluginHost, reset_host
from lightagent_contracts.suites.retrieval import RetrievalContract
from lightagent_plugin_notes import plugin
from lightagent_plugin_notes.plugin import NotesRetrieval


class TestNotesRetrievalContract(RetrievalContract):
    @pytest.fixture
    def make_retrieval(self):
        return NotesRetrieval


@pytest.fixture
def host():
    # the provider is this plugin's; retrieval= itself is lightagent-rag-fts's
    from lightagent_rag_fts import plugin as retrieval

    plugins = [("lightagent-plugin-notes", plugin), ("lightagent-rag-fts", retrieval)]
    reset_host(PluginHost(entry_points=False, plugins=plugins))
    yield
    reset_host(None)


@pytest.fixture
def notes(tmp_path):
    (tmp_path / "deploy.md").write_text(
        "# Deploying\n\nProduction uses blue-green releases.\n\nRollbacks take one command."
    )
    (tmp_path / "tea.txt").write_text("Green tea is steamed soon after picking.")
    return tmp_path


def test_the_model_searches_the_notes_and_cites_them(host, loopback_server, notes):
    loopback_server.reply(
        {
            "tool_calls": [
                {"name": "search_knowledge", "arguments": {"query": "how are releases done"}}
            ]
        },
        "Blue-green [notes:deploy.md#1].",
    )
    agent = LightAgent(
        model="loopback-model",
        api_key="test",
        base_url=loopback_server.base_url,
        retrieval=("notes", {"directory": str(notes)}),
    )
    result = agent.run("How do we release?", result_format="object")
    assert result.content == "Blue-green [notes:deploy.md#1]."
    hits = json.loads(result.tool_calls[0]["output"])
    assert hits[0]["citation"] == "notes:deploy.md#1"


def test_injection_puts_cited_notes_in_the_prompt(host, loopback_server, notes):
    loopback_server.reply("Steamed.")
    agent = LightAgent(
        model="loopback-model",
        api_key="test",
        base_url=loopback_server.base_url,
        retrieval=("notes", {"directory": str(notes)}),
        retrieval_inject=1,
    )
    agent.run("How is green tea made?")
    system = loopback_server.requests[0]["messages"][0]["content"]
    assert "[notes:tea.txt#0] Green tea is steamed soon after picking." in system


def test_bad_configuration_is_a_typed_error(host, tmp_path):
    with pytest.raises(LightAgentError) as info:
        LightAgent(
            model="m", api_key="k", retrieval=("notes", {"directory": str(tmp_path / "nope")})
        ).run("x")
    assert info.value.code == "LA-CONFIG" and "'notes'" in info.value.message
