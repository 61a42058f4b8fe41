"""Retrieval reaches the model as a search tool with citations; context injection before
the first model request is opt-in and recorded."""

from __future__ import annotations

import asyncio
import json

import pytest
from lightagent import LightAgent, LightAgentError, ScriptedModel
from lightagent.retrieval import InMemoryRetrieval
from lightagent_rag_fts.agent import RETRIEVAL_HEADER

DOCS = [
    {
        "document_id": "deploy",
        "title": "Deployment",
        "content": "Production uses blue-green releases.",
    },
    {
        "document_id": "tea",
        "title": "Tea",
        "content": "Green tea is steamed after picking.",
        "tenant_id": "t2",
    },
]


def test_the_model_gets_a_search_tool_with_citations(loopback_server):
    agent = LightAgent(
        model="loopback-model",
        api_key="k",
        base_url=loopback_server.base_url,
        retrieval=InMemoryRetrieval(DOCS),
    )
    loopback_server.reply(
        {
            "tool_calls": [
                {"name": "search_knowledge", "arguments": {"query": "blue-green releases"}}
            ]
        },
        "We use blue-green releases [rag:deploy].",
    )
    result = agent.run("How do we deploy?", result_format="object")
    offered = loopback_server.requests[0]["tools"][0]["function"]
    assert offered["name"] == "search_knowledge" and "query" in offered["parameters"]["properties"]
    hits = json.loads(result.tool_calls[0]["output"])
    assert hits[0]["citation"] == "rag:deploy" and "blue-green" in hits[0]["text"]
    assert RETRIEVAL_HEADER not in loopback_server.requests[0]["messages"][0]["content"]
    tool = agent.tools  # the search tool is a toolset tool, not a function tool
    assert "search_knowledge" not in tool


def test_injection_is_opt_in_and_recorded():
    model = ScriptedModel(["ok", "ok"])
    plain = LightAgent(model=model, retrieval=InMemoryRetrieval(DOCS))
    plain.run("blue-green releases?")
    assert RETRIEVAL_HEADER not in model.requests[0].messages[0]["content"]

    injecting = LightAgent(model=model, retrieval=InMemoryRetrieval(DOCS), retrieval_inject=True)
    result = injecting.run("blue-green releases?", result_format="object", trace=True)
    system = model.requests[1].messages[0]["content"]
    assert RETRIEVAL_HEADER in system and "[rag:deploy] Production uses blue-green" in system
    event = next(e for e in result.trace if e["type"] == "retrieval")
    assert event["data"]["citations"][0] == "rag:deploy" and event["data"]["injected"] is True
    assert event["trace_id"] == result.trace_id


class AsyncSearch:
    def __init__(self):
        self.filters = []

    async def search(self, query, *, limit=5, **filters):
        self.filters.append(filters)
        return [{"text": f"about {query}", "citation_id": "doc:1", "score": 0.5}]


def test_async_providers_and_tenant_filters_from_the_security_context():
    from lightagent import SecurityContext

    provider = AsyncSearch()
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "x", "limit": 2}}]},
            "a",
            "b",
        ]
    )
    agent = LightAgent(
        model=model,
        retrieval=provider,
        retrieval_inject=1,
    )
    agent.run("first", metadata={"tenant_id": "acme"})
    assert provider.filters == [{"tenant_id": "acme"}, {"tenant_id": "acme"}]
    asyncio.run(agent.arun("second"))
    assert provider.filters[-1] == {}
    assert "[doc:1] about second" in model.requests[-1].messages[0]["content"]
    del SecurityContext


def test_retrieval_by_name_and_bad_configuration():
    agent = LightAgent(model=ScriptedModel(["ok"]), retrieval="in-memory")
    agent.retrieval.ingest(DOCS)
    agent.run("x")
    with pytest.raises(LightAgentError) as info:
        LightAgent(model=ScriptedModel([]), retrieval_inject=3)
    assert info.value.code == "LA-CONFIG"
    with pytest.raises(LightAgentError) as info:
        LightAgent(model=ScriptedModel([]), retrieval=object())
    assert info.value.code == "LA-CONFIG"
    bad = LightAgent(
        model=ScriptedModel(["x"]), retrieval=("in-memory", {"nope": 1}), retrieval_inject=1
    )
    with pytest.raises(LightAgentError) as info:
        bad.run("x")
    assert info.value.code == "LA-CONFIG" and "'nope'" in info.value.message


def test_a_failing_search_is_recorded_and_the_run_goes_on():
    class Down:
        def search(self, query, *, limit=5, **filters):
            raise TimeoutError("index unreachable")

    model = ScriptedModel(
        [{"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "x"}}]}, "sorry"]
    )
    agent = LightAgent(model=model, retrieval=Down(), retrieval_inject=2)
    result = agent.run("x", result_format="object", trace=True)
    assert result.content == "sorry"
    assert result.tool_calls[0]["error"]["code"] == "LA-RETRIEVAL"
    stages = [e["data"]["stage"] for e in result.trace if e["type"] == "error"]
    assert stages[0] == "retrieval"


class OwnerScopedSearch:
    """A provider that names ``owner`` in ``search``: it is handed who the run acts for."""

    def __init__(self):
        self.calls = []

    def search(self, query, *, limit=5, owner=None, **filters):
        self.calls.append((owner, filters))
        return []


def test_a_provider_naming_owner_gets_the_run_s_owner_on_both_paths():
    from lightagent import SecurityContext

    provider = OwnerScopedSearch()
    call = {"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "x"}}]}
    model = ScriptedModel([call, "a", call, "b"])
    agent = LightAgent(
        model=model,
        retrieval=provider,
        retrieval_inject=1,
        security_context=SecurityContext(tenant_id="acme", project_id="p1"),
    )
    agent.run("first", user_id="alice")
    alice = {"user_id": "alice", "tenant_id": "acme", "project_id": "p1"}
    # The injected search, then the tool's.
    assert provider.calls == [(alice, {"tenant_id": "acme"})] * 2
    asyncio.run(agent.arun("second", user_id="bob"))
    assert [owner for owner, _ in provider.calls[2:]] == [{**alice, "user_id": "bob"}] * 2
    bare = OwnerScopedSearch()
    LightAgent(model=ScriptedModel(["c"]), retrieval=bare, retrieval_inject=1).run("third")
    assert bare.calls == [({"user_id": "default_user"}, {})]
    # A search toolset built by hand: the run's owner wins over a configured one.
    from lightagent_rag_fts import SearchToolset

    own = OwnerScopedSearch()
    toolset = SearchToolset(own, filters={"owner": {"user_id": "someone else"}})
    LightAgent(model=ScriptedModel([call, "d"]), tools=[toolset]).run("fourth", user_id="eve")
    assert own.calls == [({"user_id": "eve"}, {})]


def test_retrieval_inject_is_an_agent_attribute_settable_between_runs():
    model = ScriptedModel(["plain", "injected"])
    agent = LightAgent(model=model, retrieval=InMemoryRetrieval(DOCS))
    assert agent.retrieval_inject == 0
    agent.run("How do we deploy to production?")
    agent.retrieval_inject = 1
    agent.run("How do we deploy to production?")
    assert RETRIEVAL_HEADER not in model.requests[0].messages[0]["content"]
    assert RETRIEVAL_HEADER in model.requests[1].messages[0]["content"]
