"""Every Python block of the seeds' runtime guide (docs/runtime_v010.md of LightAgent 0.11),
in order, run as written: only the imports change, the model is the loopback server
(``seeds_block`` in conftest.py). docs/seeds-coverage.md lists the blocks with their tests.
"""

from __future__ import annotations

import ast
import asyncio
import re

import pytest
from lightagent import BaseCapabilityProvider, CapabilitySpec, LightAgent, PolicyError


def agent_on(server) -> LightAgent:
    return LightAgent(model="deepseek-v4-flash", api_key="k", base_url=server.base_url)


def test_durable_sessions(seeds_block, loopback_server, tmp_path, capsys) -> None:
    loopback_server.reply("Decision noted: blue-green releases.", "We decided on blue-green.")
    ns = seeds_block(
        """
        from LightAgent import LightAgent, SqliteSessionStore

        store = SqliteSessionStore(".lightagent/sessions.sqlite3")
        agent = LightAgent(
            model="deepseek-v4-flash",
            api_key="your_api_key",
            base_url="your_base_url",
            session_store=store,
        )

        agent.run("Remember this project decision", session_id="project-42")
        agent.run("What did we decide?", session_id="project-42")

        print(agent.replay_session("project-42"))
        checkpoint = agent.checkpoint_session("before-implementation")
        fork = agent.fork_session(through_sequence=checkpoint["sequence"])
        """,
        "durable_sessions",
    )
    assert (tmp_path / ".lightagent" / "sessions.sqlite3").is_file()
    # The second run saw the first one's turn (history from the store).
    second = loopback_server.requests[1]["messages"]
    assert {"role": "user", "content": "Remember this project decision"} in second
    # the replay's summary: the two completed runs' ids, as the seeds list them
    assert re.search(r"completed_turns=\['[^']+', '[^']+'\]", capsys.readouterr().out)
    checkpoint, fork = ns["checkpoint"], ns["fork"]
    assert checkpoint["sequence"] > 0
    forked = ns["agent"].get_session(fork["session_id"] if isinstance(fork, dict) else fork)
    assert forked and forked[-1].sequence <= checkpoint["sequence"] + 1


def test_async_usage(seeds_block, loopback_server, capsys) -> None:
    loopback_server.reply("incident analysed", "streamed analysis")
    agent = agent_on(loopback_server)
    ns = seeds_block(
        """
        result = await agent.arun("Analyze the incident")

        stream = await agent.arun("Analyze the incident", stream=True)
        async for chunk in stream:
            print(chunk)
        """,
        "async_usage",
        agent=agent,
    )
    assert ns["result"] == "incident analysed"
    printed = [ast.literal_eval(line) for line in capsys.readouterr().out.splitlines()]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in printed)
    assert text == "streamed analysis"
    assert [r.get("stream", False) for r in loopback_server.requests] == [False, True]


def test_capabilities_and_policy(seeds_block) -> None:
    ns = seeds_block(
        """
        from LightAgent import (
            BaseCapabilityProvider,
            CapabilityRegistry,
            CapabilitySpec,
            PolicyDecision,
            PolicyEngine,
        )

        def workspace_policy(request):
            if request.capability.write and request.context.metadata.get("read_only"):
                return PolicyDecision.block("workspace is read-only")
            return PolicyDecision.allow(request.arguments)

        registry = CapabilityRegistry(policy_engine=PolicyEngine([workspace_policy]))
        """,
        "capabilities_and_policy",
    )
    registry = ns["registry"]
    written: list[str] = []
    registry.register(
        BaseCapabilityProvider(
            [CapabilitySpec("fs.write", write=True)],
            handlers={"fs.write": lambda text: written.append(text) or "ok"},
        )
    )

    class Ctx:
        def __init__(self, read_only: bool) -> None:
            self.metadata = {"read_only": read_only}

    assert asyncio.run(registry.invoke("fs.write", {"text": "a"}, context=Ctx(False))) == "ok"
    with pytest.raises(PolicyError, match="read-only"):
        asyncio.run(registry.invoke("fs.write", {"text": "b"}, context=Ctx(True)))
    assert written == ["a"]
    assert registry.conflicts() == []


def test_long_task_state(seeds_block, loopback_server, tmp_path) -> None:
    from lightagent import SqliteSessionStore

    # as in the guide, the agent of the durable-sessions block, after a run of its session
    agent = LightAgent(
        model="deepseek-v4-flash",
        api_key="k",
        base_url=loopback_server.base_url,
        session_store=SqliteSessionStore(tmp_path / "sessions.sqlite3"),
    )
    loopback_server.reply("Noted.")
    agent.run("We release on Friday.", session_id="release-2026-06")
    ns = seeds_block(
        """
        goal = agent.runtime.goals.create(
            "Prepare the release",
            acceptance_criteria=["tests pass", "artifacts build"],
        )
        agent.runtime.goals.activate(goal.goal_id)
        agent.runtime.inbox.enqueue("steering", "Do not publish yet", message_id="release-hold")
        agent.runtime.pause("waiting for CI")
        """,
        "long_task_state",
        agent=agent,
    )
    state = agent.runtime.snapshot()
    assert state["session_id"] == "release-2026-06" and state["paused"]
    assert [g["goal_id"] for g in state["goals"]] == [ns["goal"].goal_id]
    assert agent.runtime.goals.get(ns["goal"].goal_id).status == "active"
    assert [m["message_id"] for m in state["inbox"]["pending"]] == ["release-hold"]
    # the pause is obeyed: a run of the paused session stops before its first request
    requests = len(loopback_server.requests)
    paused = agent.run("Status?", session_id="release-2026-06", result_format="object")
    assert paused.error is not None and len(loopback_server.requests) == requests


def test_context_and_knowledge(seeds_block, capsys) -> None:
    ns = seeds_block(
        """
        from LightAgent import RetrievalDocument, SqliteFTSRetrievalProvider

        rag = SqliteFTSRetrievalProvider(".lightagent/knowledge.sqlite3")
        rag.ingest(RetrievalDocument(
            content="The production deployment uses blue-green releases.",
            title="Deployment guide",
            source="docs/deployment.md",
            tenant_id="acme",
        ))

        for result in rag.search("deployment", tenant_id="acme"):
            print(result.citation_id, result.content)
        """,
        "sqlite_fts_retrieval",
    )
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].endswith("The production deployment uses blue-green releases.")
    assert ns["rag"].search("deployment", tenant_id="other") == []
