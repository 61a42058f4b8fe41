"""The agent uses the providers through the kernel's seam: by name from the plugin, over the
loopback OpenAI-wire server, with the run's tenant narrowing the search tool."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from lightagent import LightAgent
from lightagent.plugins import PluginHost, reset_host
from lightagent_rag_fts import RetrievalDocument, SqliteFTSRetrievalProvider, plugin


@pytest.fixture
def host() -> Iterator[PluginHost]:
    created = PluginHost(entry_points=False, plugins=[("lightagent-rag-fts", plugin)])
    reset_host(created)
    yield created
    reset_host(None)


@pytest.fixture
def index(tmp_path: Any) -> Any:
    path = tmp_path / "kb.db"
    with SqliteFTSRetrievalProvider(path) as provider:
        provider.ingest(
            [
                RetrievalDocument(
                    "Production uses blue-green releases.",
                    title="Deploying",
                    document_id="acme-deploy",
                    tenant_id="acme",
                ),
                RetrievalDocument(
                    "Globex deploys with canary releases.",
                    title="Deploying",
                    document_id="globex-deploy",
                    tenant_id="globex",
                ),
            ]
        )
    return path


def test_the_plugin_registers_the_providers(host: PluginHost) -> None:
    names = set(host.registry.names("retrieval"))
    assert {"sqlite-fts", "postgres-fts", "session-search"} <= names


def test_an_agent_searches_by_name_with_the_runs_tenant(
    host: PluginHost, loopback_server: Any, index: Any
) -> None:
    call = {"name": "search_knowledge", "arguments": {"query": "how are releases done"}}
    loopback_server.reply({"tool_calls": [call]}, "Blue-green [rag:acme-deploy:0].")
    agent = LightAgent(
        model="loopback-model",
        api_key="test",
        base_url=loopback_server.base_url,
        retrieval=("sqlite-fts", {"path": str(index)}),
    )
    result = agent.run("How do we release?", result_format="object", metadata={"tenant_id": "acme"})
    assert result.error is None, result.error
    hits = json.loads(result.tool_calls[0]["output"])
    assert [h["citation"] for h in hits] == ["rag:acme-deploy:0"]  # never globex's document


def test_without_a_tenant_the_tool_fails_closed_and_the_run_goes_on(
    host: PluginHost, loopback_server: Any, index: Any
) -> None:
    call = {"name": "search_knowledge", "arguments": {"query": "releases"}}
    loopback_server.reply({"tool_calls": [call]}, "I could not search.")
    agent = LightAgent(
        model="loopback-model",
        api_key="test",
        base_url=loopback_server.base_url,
        retrieval=SqliteFTSRetrievalProvider(index),
    )
    result = agent.run("How do we release?", result_format="object")
    assert result.content == "I could not search."
    tool_message = loopback_server.requests[1]["messages"][-1]["content"]
    assert "LA-RETRIEVAL-TENANT" in tool_message
    assert "canary" not in tool_message and "blue-green" not in tool_message


def test_injection_puts_cited_chunks_in_the_prompt(
    host: PluginHost, loopback_server: Any, index: Any
) -> None:
    loopback_server.reply("Blue-green.")
    agent = LightAgent(
        model="loopback-model",
        api_key="test",
        base_url=loopback_server.base_url,
        retrieval=("sqlite-fts", {"path": str(index)}),
        retrieval_inject=1,
    )
    result = agent.run(
        "blue-green releases?", result_format="object", trace=True, metadata={"tenant_id": "acme"}
    )
    system = loopback_server.requests[0]["messages"][0]["content"]
    assert "[rag:acme-deploy:0] Production uses blue-green releases." in system
    events = [e["data"] for e in result.trace if e["type"] == "retrieval"]
    assert events and events[0]["citations"] == ["rag:acme-deploy:0"]
