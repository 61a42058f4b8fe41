"""The served API through the official openai SDK: completions, streams, errors, sessions, load."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import openai
import pytest
from lightagent import LightAgent, SqliteSessionStore, tool
from lightagent_serve import load_agents

KEY = "serve-test-key-0123456789"


def agent_for(server, name: str = "support", **kw) -> LightAgent:
    kw.setdefault("instructions", "You are the support agent.")
    return LightAgent(
        name=name, model="gpt-4.1", api_key="upstream", base_url=server.base_url, **kw
    )


def test_models_lists_every_agent(loopback_server, serve) -> None:
    served = serve([agent_for(loopback_server, "support"), agent_for(loopback_server, "billing")])
    models = served.client().models.list()
    assert [m.id for m in models.data] == ["support", "billing"]
    assert {m.owned_by for m in models.data} == {"lightagent"}


def test_completion_takes_the_request_messages_as_history(loopback_server, serve) -> None:
    loopback_server.reply(
        {"content": "Your order shipped.", "usage": {"prompt_tokens": 30, "completion_tokens": 4}}
    )
    served = serve(agent_for(loopback_server))
    raw = served.client().chat.completions.with_raw_response.create(
        model="support",
        messages=[
            {"role": "system", "content": "Answer in English."},
            {"role": "user", "content": "Hi, order 42?"},
            {"role": "assistant", "content": "Let me check."},
            {"role": "user", "content": "Well?"},
        ],
    )
    reply = raw.parse()
    assert reply.choices[0].message.content == "Your order shipped."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == "support"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (30, 4)
    assert raw.headers["x-lightagent-run-id"].startswith("run_")
    sent = loopback_server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "system", "user", "assistant", "user"]
    assert sent[0]["content"] == "You are the support agent."  # the agent's own, first
    assert sent[-1]["content"] == "Well?"


def test_streamed_completion_with_usage(loopback_server, serve) -> None:
    answer = "Streaming works, piece by piece, through the served agent."
    loopback_server.reply(
        {"content": answer, "usage": {"prompt_tokens": 9, "completion_tokens": 12}}
    )
    served = serve(agent_for(loopback_server))
    chunks = list(
        served.client().chat.completions.create(
            model="support",
            messages=[{"role": "user", "content": "Stream please"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == answer
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 12
    assert loopback_server.requests[0]["stream"] is True


def test_the_agent_runs_its_own_tools_server_side(loopback_server, serve) -> None:
    @tool
    def order_status(order_id: int) -> str:
        """Look up an order."""
        return f"order {order_id}: shipped"

    loopback_server.reply(
        {"tool_calls": [{"name": "order_status", "arguments": {"order_id": 42}}]},
        "Order 42 has shipped.",
    )
    served = serve(agent_for(loopback_server, tools=[order_status]))
    chunks = list(
        served.client().chat.completions.create(
            model="support", messages=[{"role": "user", "content": "order 42?"}], stream=True
        )
    )
    assert all(not c.choices[0].delta.tool_calls for c in chunks if c.choices)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Order 42 has shipped."
    assert loopback_server.requests[1]["messages"][-1]["content"] == "order 42: shipped"


def test_a_wrong_or_missing_key_is_401_in_openai_shape(loopback_server, serve) -> None:
    served = serve(agent_for(loopback_server))
    with pytest.raises(openai.AuthenticationError) as info:
        served.client(api_key="wrong").chat.completions.create(
            model="support", messages=[{"role": "user", "content": "hi"}]
        )
    assert info.value.status_code == 401
    assert info.value.code == "invalid_api_key"
    assert info.value.body["type"] == "invalid_request_error"
    response = httpx.get(f"{served.base_url}/models")
    assert response.status_code == 401
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    assert loopback_server.requests == []


def test_an_unknown_model_is_404(loopback_server, serve) -> None:
    served = serve(agent_for(loopback_server))
    with pytest.raises(openai.NotFoundError) as info:
        served.client().chat.completions.create(
            model="nobody", messages=[{"role": "user", "content": "hi"}]
        )
    assert info.value.code == "model_not_found"
    assert info.value.body["param"] == "model"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "support"}, "messages"),
        ({"model": "support", "messages": []}, "messages"),
        ({"model": "support", "messages": [{"role": "wizard", "content": "x"}]}, "messages"),
        ({"model": "support", "messages": [{"role": "assistant", "content": "x"}]}, "messages"),
        ({"messages": [{"role": "user", "content": "x"}]}, "model"),
        (
            {
                "model": "support",
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"type": "function", "function": {"name": "f"}}],
            },
            "tools",
        ),
        ({"model": "support", "messages": [{"role": "user", "content": "x"}], "n": 2}, "n"),
        ({"model": "support", "messages": [{"role": "user", "content": "x"}], "user": ""}, "user"),
    ],
)
def test_bad_bodies_are_400_in_openai_shape(loopback_server, serve, body, param) -> None:
    served = serve(agent_for(loopback_server))
    response = httpx.post(
        f"{served.base_url}/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {KEY}"},
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert loopback_server.requests == []


def test_a_body_that_is_not_json_is_400(loopback_server, serve) -> None:
    served = serve(agent_for(loopback_server))
    response = httpx.post(
        f"{served.base_url}/chat/completions",
        content=b"{not json",
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "LA-JSON"


@pytest.mark.parametrize(
    ("upstream", "status", "code"),
    [(429, 429, "LA-429"), (400, 502, "LA-400"), (503, 503, "LA-503")],
)
@pytest.mark.parametrize("stream", [False, True])
def test_run_errors_keep_their_code_and_map_to_a_status(
    loopback_server, serve, upstream, status, code, stream
) -> None:
    loopback_server.default = loopback_server.error(upstream)
    agent = LightAgent(
        name="support",
        model="gpt-4.1",
        api_key="upstream",
        base_url=loopback_server.base_url,
    )
    agent.model.max_retry = 0  # the upstream error is the answer, not a retry
    served = serve(agent)
    with pytest.raises(openai.APIStatusError) as info:
        served.client().chat.completions.create(
            model="support", messages=[{"role": "user", "content": "hi"}], stream=stream
        )
    assert info.value.status_code == status
    assert info.value.code == code


def test_an_error_after_the_stream_began_arrives_as_an_error_event(loopback_server, serve) -> None:
    loopback_server.reply({"content": "partial answer that never ends", "truncate": True})
    agent = agent_for(loopback_server)
    agent.model.max_retry = 0
    served = serve(agent)
    stream = served.client().chat.completions.create(
        model="support", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    with pytest.raises(openai.APIError) as info:
        for _ in stream:
            pass
    assert info.value.code == "LA-TRUNCATED"


def test_user_and_session_header_continue_a_conversation(loopback_server, serve, tmp_path) -> None:
    store = SqliteSessionStore(tmp_path / "sessions.sqlite3")
    loopback_server.reply("Nice to meet you, Ann.", "Your name is Ann.")
    served = serve(agent_for(loopback_server, session_store=store))
    client = served.client()

    def ask(text: str, user: str, session: str = "s-1") -> str:
        reply = client.chat.completions.create(
            model="support",
            messages=[{"role": "user", "content": text}],
            user=user,
            extra_headers={"X-Session-Id": session},
        )
        return reply.choices[0].message.content

    assert ask("My name is Ann.", "alice") == "Nice to meet you, Ann."
    assert ask("What is my name?", "alice") == "Your name is Ann."
    second = [m["content"] for m in loopback_server.requests[1]["messages"]]
    assert second[1:] == ["My name is Ann.", "Nice to meet you, Ann.", "What is my name?"]
    with pytest.raises(openai.PermissionDeniedError) as info:
        ask("What is her name?", "mallory")
    assert info.value.code == "LA-SESSION-OWNER"
    assert len(loopback_server.requests) == 2  # the refused run never reached the model


def test_a_session_header_for_an_agent_without_sessions_is_400(loopback_server, serve) -> None:
    served = serve(agent_for(loopback_server))
    with pytest.raises(openai.BadRequestError) as info:
        served.client().chat.completions.create(
            model="support",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"X-Session-Id": "s-1"},
        )
    assert info.value.body["param"] == "X-Session-Id"


def test_fifty_concurrent_requests_are_served_concurrently(loopback_server, serve) -> None:
    lock = threading.Lock()
    state = {"now": 0, "most": 0}

    def reply(body: dict) -> str:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(1.0)  # long enough that even a busy machine has many in flight
        with lock:
            state["now"] -= 1
        return "answer to " + body["messages"][-1]["content"]

    loopback_server.default = reply
    served = serve(agent_for(loopback_server))
    client = served.async_client(timeout=60)

    async def one(i: int) -> str:
        messages = [{"role": "user", "content": f"q{i}"}]
        if i % 2:
            stream = await client.chat.completions.create(
                model="support", messages=messages, stream=True
            )
            return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        done = await client.chat.completions.create(model="support", messages=messages)
        return done.choices[0].message.content

    async def main() -> list[str]:
        try:
            return await asyncio.gather(*(one(i) for i in range(50)))
        finally:
            await client.close()

    answers = asyncio.run(main())
    assert answers == [f"answer to q{i}" for i in range(50)]
    assert state["most"] >= 10, state  # one at a time would be 1


def test_load_agents_takes_lists_dicts_and_factories(loopback_server) -> None:
    a, b = agent_for(loopback_server, "a"), agent_for(loopback_server, "b")
    assert list(load_agents([a, b])) == ["a", "b"]
    assert list(load_agents({"alias": a})) == ["alias"]
    assert list(load_agents(lambda: [b])) == ["b"]
    from lightagent import ConfigurationError

    for bad in ([a, agent_for(loopback_server, "a")], [], {"x": object()}, 42, "nomodule"):
        with pytest.raises(ConfigurationError) as info:
            load_agents(bad)
        assert info.value.code == "LA-CONFIG"


def test_models_json_is_what_openai_clients_expect(loopback_server, serve) -> None:
    served = serve({"m1": agent_for(loopback_server)})
    body = httpx.get(f"{served.base_url}/models", headers={"Authorization": f"Bearer {KEY}"}).json()
    assert body["object"] == "list"
    assert json.loads(json.dumps(body))["data"][0]["id"] == "m1"


def test_unknown_paths_and_methods_answer_in_openai_shape(loopback_server, serve) -> None:
    served = serve(agent_for(loopback_server))
    headers = {"Authorization": f"Bearer {KEY}"}
    missing = httpx.get(f"{served.base_url}/completions", headers=headers)
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "invalid_request_error"
    wrong = httpx.get(f"{served.base_url}/chat/completions", headers=headers)
    assert wrong.status_code == 405
    assert "error" in wrong.json()


def test_an_agent_that_crashes_gets_a_500_in_openai_shape(serve) -> None:
    class Broken:
        name = "broken"

        async def arun(self, query, **options):
            raise RuntimeError("kaput")

        def astream(self, query, **options):
            raise RuntimeError("kaput")

    served = serve(Broken())
    for stream in (False, True):
        with pytest.raises(openai.InternalServerError) as info:
            served.client().chat.completions.create(
                model="broken", messages=[{"role": "user", "content": "hi"}], stream=stream
            )
        assert info.value.code == "LA-UNKNOWN"
