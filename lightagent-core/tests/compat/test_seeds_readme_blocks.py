"""Every Python block of the seeds' README (LightAgent 0.11), in README order, run as written.

Only the imports change and the model is the loopback OpenAI-wire server (``seeds_block``
in conftest.py); each test is named after the README section of its block, and checks what
the block did. docs/seeds-coverage.md lists the blocks with their tests.
"""

from __future__ import annotations

import json
from typing import Any


def test_safe_tool_execution_defaults(seeds_block, capsys) -> None:
    seeds_block(
        """
        from LightAgent import safe_expression
        print(safe_expression("45 * 9827"))
        """,
        "safe_expression",
    )
    assert capsys.readouterr().out.strip() == str(45 * 9827)


def send_payment(invoice: int) -> str:
    """Pay the invoice numbered `invoice`."""
    return f"paid {invoice}"


def test_evaluate_and_review_high_risk_actions(seeds_block, loopback_server, capsys) -> None:
    from lightagent import LightAgent

    # The block starts from an existing `agent` with a payment tool.
    agent = LightAgent(
        model="gpt-4.1", api_key="k", base_url=loopback_server.base_url, tools=[send_payment]
    )
    loopback_server.reply(
        {"tool_calls": [{"name": "send_payment", "arguments": {"invoice": 42}}]},
        "Payment 42 needs approval first.",
    )
    ns = seeds_block(
        """
        from LightAgent import EvaluationCase, HumanApprovalHook, LightEvaluator
        agent.hooks.hooks.append(HumanApprovalHook(tools={"send_payment"}))
        report = LightEvaluator().run(agent, [
            EvaluationCase(
                name="payment policy",
                query="Pay invoice 42",
                expected_trace_events=("approval_required",),
                forbidden_tools=("delete_account",),
            ),
        ])
        print(report.to_dict())
        """,
        "evaluate_and_review",
        agent=agent,
    )
    case = ns["report"]["payment policy"]
    assert case.passed, case.failures
    assert "payment policy" in capsys.readouterr().out
    # The payment waited for a review: it never ran.
    assert not any("paid 42" in json.dumps(e["data"], default=str) for e in case.trace)


def test_offline_lightdag_example(seeds_block, capsys) -> None:
    ns = seeds_block(
        """
        from pathlib import Path
        from tempfile import TemporaryDirectory
        from LightAgent import (
            CallableVerifier, LightDAG, LocalArtifactStore, PermissionSet,
            SecurityContext, SqliteTaskGraphStore, TaskOutcome, TaskSpec,
        )
        with TemporaryDirectory() as directory:
            root = Path(directory)
            store = SqliteTaskGraphStore(root / "dag.sqlite3")
            try:
                dag = LightDAG(
                    store=store,
                    artifact_store=LocalArtifactStore(root / "artifacts"),
                    verifiers={"exact": CallableVerifier(
                        "exact", lambda request: request.candidate_content == b"42",
                    )},
                )
                dag.register_worker("local", lambda context: TaskOutcome.candidate("42"))
                dag.create_run([TaskSpec(
                    task_id="answer", goal="42",
                    acceptance_contract={"equals": "42"},
                    worker_key="local", verifier_key="exact",
                )], run_id="readme-demo", context=SecurityContext(
                    user_id="alice", tenant_id="demo", project_id="readme",
                    permissions=PermissionSet(allowed=frozenset({"dag.task.execute"})),
                ))
                result = dag.run("readme-demo")
                assert result.success
                print(result.status.value)
            finally:
                store.close()
        """,
        "offline_lightdag",
    )
    assert ns["result"].success
    assert capsys.readouterr().out.strip() == ns["result"].status.value


def test_hello_world_example_code(seeds_block, loopback_server, capsys) -> None:
    loopback_server.reply("Hello! I am LightAgent.")
    seeds_block(
        """
        from LightAgent import LightAgent
        # Initialize Agent
        agent = LightAgent(model="gpt-4.1", api_key="your_api_key", base_url="your_base_url")
        # Run Agent
        response = agent.run("Hello, who are you?")
        print(response)
        """,
        "hello_world",
    )
    assert capsys.readouterr().out == "Hello! I am LightAgent.\n"
    assert loopback_server.requests[0]["messages"][-1] == {
        "role": "user",
        "content": "Hello, who are you?",
    }
    loopback_server.assert_exhausted()


def test_inspect_a_run_trace(seeds_block, loopback_server, capsys) -> None:
    loopback_server.reply("I am a traced agent.")
    ns = seeds_block(
        """
        from LightAgent import LightAgent
        agent = LightAgent(model="gpt-4.1", api_key="your_api_key", base_url="your_base_url")
        result = agent.run("Hello, who are you?", result_format="object", trace=True)
        print(result.content)
        print(result.trace_id)
        print(result.trace)
        for event in agent.export_trace():
            print(event["type"], event["data"])
        """,
        "inspect_trace",
    )
    out = capsys.readouterr().out.splitlines()
    result = ns["result"]
    assert out[0] == "I am a traced agent." and out[1] == result.trace_id
    types = [line.split(" ", 1)[0] for line in out[3:]]
    assert types[0] == "run_start" and types[-1] == "run_end"
    assert {"model_request", "model_response"} <= set(types)


def test_checkpoint_a_lightflow_run(seeds_block, loopback_server, capsys) -> None:
    loopback_server.reply("Research notes.", "The report.")
    ns = seeds_block(
        """
        from LightAgent import JsonLightFlowStore, LightAgent, LightFlow
        research_agent = LightAgent(model="gpt-4.1", api_key="your_api_key", base_url="your_base_url")
        writer_agent = LightAgent(model="gpt-4.1", api_key="your_api_key", base_url="your_base_url")
        store = JsonLightFlowStore(".lightflow_runs")
        flow = (
            LightFlow(store=store)
            .step("research", agent=research_agent, timeout=30)
            .step("write", agent=writer_agent, depends_on=["research"], max_retry=2)
        )
        result = flow.run("Analyze this company", run_id="report-001", trace=True)
        if not result.success:
            result = flow.resume("report-001")
        print(result.status)
        print(flow.get_run("report-001")["steps"])
        """,
        "checkpoint_lightflow",
    )
    assert ns["result"].success
    steps = ns["flow"].get_run("report-001")["steps"]
    assert [s["name"] for s in steps] == ["research", "write"]
    assert [s["content"] for s in steps] == ["Research notes.", "The report."]
    assert "research" in capsys.readouterr().out
    # The writer saw the research step's output.
    assert "Research notes." in json.dumps(loopback_server.requests[1]["messages"])


def test_use_sharedmemorypool(seeds_block, loopback_server) -> None:
    loopback_server.reply("Noted: concise reports.")
    ns = seeds_block(
        """
        from LightAgent import LightAgent, MemoryPolicy, SharedMemoryPool
        shared_memory = SharedMemoryPool(agent_name="writer")
        agent = LightAgent(
            name="writer",
            model="gpt-4.1",
            api_key="your_api_key",
            base_url="your_base_url",
            memory=shared_memory,
            memory_policy=MemoryPolicy(
                namespace="tenant-a",
                allow_unattributed_results=False,
                allowed_sources=("user",),
                allowed_scopes=("user",),
            ),
        )
        agent.run("Remember that I prefer concise reports.", user_id="alice")
        print(shared_memory.list_records(user_id="tenant-a:alice"))
        """,
        "shared_memory_pool",
    )
    records = ns["shared_memory"].list_records(user_id="tenant-a:alice")
    assert len(records) == 1 and "concise reports" in json.dumps(records, default=str)


def test_set_model_self_perception_via_system_prompt(seeds_block, loopback_server, capsys) -> None:
    loopback_server.reply("I am LightAgent.")
    seeds_block(
        """
        from LightAgent import LightAgent
        # Initialize Agent
        agent = LightAgent(
            role="Please remember that you are LightAgent, a useful assistant that helps users use multiple tools.",  # system role description
            model="gpt-4.1",  # Supported models: openai, chatglm, deepseek, qwen, etc.
            api_key="your_api_key",  # Replace with your large model provider API Key
            base_url="your_base_url",  # Replace with your large model provider api url
        )
        # Run Agent
        response = agent.run("Who are you?")
        print(response)
        """,
        "system_prompt",
    )
    assert capsys.readouterr().out == "I am LightAgent.\n"
    system = loopback_server.requests[0]["messages"][0]
    assert system["role"] == "system" and "you are LightAgent" in system["content"]


def test_tool_example_code(seeds_block, loopback_server, capsys) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city_name": "Shanghai"}}]},
        "Shanghai is sunny.",
    )
    seeds_block(
        '''
        from LightAgent import LightAgent
        # Define Tool
        def get_weather(city_name: str) -> str:
            """
            Get the current weather for `city_name`
            """
            return f"Query result: {city_name} is sunny."
        # Define tool information inside the function
        get_weather.tool_info = {
            "tool_name": "get_weather",
            "tool_description": "Get current weather information for the specified city.",
            "tool_params": [
                {"name": "city_name", "description": "The name of the city to query", "type": "string", "required": True},
            ]
        }
        tools = [get_weather]
        # Initialize Agent
        agent = LightAgent(model="gpt-4.1", api_key="your_api_key", base_url="your_base_url", tools=tools)
        # Run Agent
        response = agent.run("Please check the weather in Shanghai.")
        print(response)
        ''',
        "tool_example",
    )
    assert capsys.readouterr().out == "Shanghai is sunny.\n"
    first, second = loopback_server.requests
    fn = first["tools"][0]["function"]
    assert fn["name"] == "get_weather"
    assert fn["description"] == "Get current weather information for the specified city."
    assert fn["parameters"]["required"] == ["city_name"]
    assert second["messages"][-1]["content"] == "Query result: Shanghai is sunny."


class YourMemoryBackend:
    """The block's ``your_memory_backend``: the seeds' store/retrieve contract."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def store(self, data: Any, user_id: str) -> dict[str, Any]:
        self.records.append({"data": data, "user_id": user_id})
        return {"ok": True}

    def retrieve(self, query: str, user_id: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["user_id"] == user_id]


def test_detachable_memory_module(seeds_block, loopback_server) -> None:
    loopback_server.reply("I will keep reports concise.")
    backend = YourMemoryBackend()
    ns = seeds_block(
        """
        from LightAgent import LightAgent, MemoryPolicy
        agent = LightAgent(
            model="gpt-4.1",
            api_key="your_api_key",
            base_url="your_base_url",
            memory=your_memory_backend,
            memory_policy=MemoryPolicy(
                namespace="tenant-a",
                allowed_sources=("user", "reflection"),
                allowed_scopes=("user", "agent"),
                reject_duplicate_writes=True,
                min_write_length=8,
            ),
        )
        response = agent.run("Remember that I prefer concise reports.", user_id="alice")
        """,
        "memory_module",
        your_memory_backend=backend,
    )
    assert ns["response"] == "I will keep reports concise."
    assert [r["user_id"] for r in backend.records] == ["tenant-a:alice"]
    assert "concise reports" in json.dumps(backend.records[0]["data"], default=str)


def test_tool_integration(seeds_block, loopback_server) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "get_order_status", "arguments": {"order_id": "A-7"}}]},
        "Order A-7 is being processed.",
    )
    ns = seeds_block(
        """
        from LightAgent import LightAgent
        def get_order_status(order_id: str) -> str:
            return f"Order {order_id} is being processed."
        get_order_status.tool_info = {
            "tool_name": "get_order_status",
            "tool_description": "Get the status of an order.",
            "tool_params": [
                {"name": "order_id", "description": "Order ID", "type": "string", "required": True},
            ],
        }
        agent = LightAgent(
            model="gpt-4.1",
            api_key="your_api_key",
            base_url="your_base_url",
            tools=[get_order_status],
        )
        """,
        "tool_integration",
    )
    agent = ns["agent"]
    assert [t["function"]["name"] for t in agent.get_tools()] == ["get_order_status"]
    assert agent.run("Where is order A-7?") == "Order A-7 is being processed."
    assert loopback_server.requests[1]["messages"][-1]["content"] == (
        "Order A-7 is being processed."
    )


ORDER_TOOL = '''```python
def order_status(order_id: str) -> str:
    """Status of an order from the internal order API.

    Args:
        order_id: The order's id.
    """
    return f"order {order_id}: processing"
```'''


def test_tool_generator(seeds_block, loopback_server, tmp_path) -> None:
    from lightagent import LightAgent

    loopback_server.reply(ORDER_TOOL)
    agent = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url)
    ns = seeds_block(
        """
        agent.create_tool(
            "Create a tool that calls the internal order status API.",
            tools_directory="tools",
        )
        """,
        "tool_generator",
        agent=agent,
    )
    del ns
    # Deliberate difference (docs/migration.md): the written tool waits in quarantine for a
    # review instead of being imported at once.
    assert agent.tools.get("order_status") is None
    assert list((tmp_path / "tools").rglob("*.py"))
    request = loopback_server.requests[0]
    assert "internal order status API" in json.dumps(request["messages"])


def test_tree_of_thought(seeds_block, loopback_server) -> None:
    loopback_server.reply(
        "1. Understand the question. 2. Answer it.", "The plan holds.", "The answer."
    )
    ns = seeds_block(
        """
        from LightAgent import LightAgent
        agent = LightAgent(
            model="gpt-4.1",
            api_key="your_api_key",
            base_url="your_base_url",
            tree_of_thought=True,
            tot_model="gpt-4.1",
            tot_api_key="your_api_key",
            tot_base_url="your_base_url",
        )
        """,
        "tree_of_thought",
    )
    assert ns["agent"].run("Plan, then answer.") == "The answer."
    planning, reflecting, answering = loopback_server.requests
    assert planning["model"] == reflecting["model"] == "gpt-4.1"  # tot_model
    assert "1. Understand the question." in json.dumps(answering["messages"])
    assert answering["messages"][-1]["content"] == "Plan, then answer."


def test_multi_agent_collaboration(seeds_block, loopback_server) -> None:
    # The block names no model or server: OPENAI_BASE_URL / OPENAI_API_KEY (the loopback
    # server) and the default model, as in the seeds.
    loopback_server.reply(
        {"tool_calls": [{"name": "transfer_to_finance", "arguments": {"reason": "payments"}}]},
        "Vendor payments are approved in the finance portal.",
    )
    ns = seeds_block(
        """
        from LightAgent import LightAgent, LightSwarm
        frontdesk = LightAgent(name="frontdesk", role="Route requests to the right specialist.")
        finance = LightAgent(name="finance", role="Answer finance approval questions.")
        swarm = LightSwarm()
        swarm.register_agent(frontdesk, finance)
        result = swarm.run(agent=frontdesk, query="How do I approve a vendor payment?")
        """,
        "multi_agent",
    )
    assert ns["result"] == "Vendor payments are approved in the finance portal."
    first, second = loopback_server.requests
    assert "transfer_to_finance" in [t["function"]["name"] for t in first["tools"]]
    assert "Answer finance approval questions." in second["messages"][0]["content"]


def test_streaming_api(seeds_block, loopback_server, capsys) -> None:
    from lightagent import LightAgent

    loopback_server.reply("AI agents plan and act.")
    agent = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url)
    seeds_block(
        """
        for chunk in agent.run("Write a short report about AI agents.", stream=True):
            print(chunk)
        """,
        "streaming",
        agent=agent,
    )
    printed = capsys.readouterr().out
    assert "chat.completion.chunk" in printed and "AI agents" in printed
    assert loopback_server.requests[0]["stream"] is True


def test_langfuse_log_tracking(seeds_block, loopback_server, capsys) -> None:
    from lightagent import LightAgent

    loopback_server.reply("Workflow looks fine.")
    agent = LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url)
    ns = seeds_block(
        """
        result = agent.run("Debug this workflow.", result_format="object", trace=True)
        print(result.trace_id)
        print(agent.export_trace())
        """,
        "trace_debug",
        agent=agent,
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ns["result"].trace_id and "run_start" in out[1]


def test_lightflow_workflows(seeds_block, loopback_server) -> None:
    loopback_server.reply("Draft summary.", "Reviewed summary.")
    ns = seeds_block(
        """
        from LightAgent import JsonLightFlowStore, LightAgent, LightFlow
        store = JsonLightFlowStore(".lightflow_runs")
        draft_agent = LightAgent(model="gpt-4.1", api_key="your_api_key", base_url="your_base_url")
        review_agent = LightAgent(model="gpt-4.1", api_key="your_api_key", base_url="your_base_url")
        backup_agent = LightAgent(model="gpt-4.1", api_key="your_api_key", base_url="your_base_url")
        def approve(step, context):
            return {"approved": True, "reason": "Approved by policy."}
        flow = (
            LightFlow(store=store)
            .step("draft", agent=draft_agent, timeout=30, max_retry=2)
            .step(
                "review",
                agent=review_agent,
                depends_on=["draft"],
                requires_approval=True,
                approval_handler=approve,
                fallback_agent=backup_agent,
            )
        )
        validation = flow.validate(strict=True)
        if validation["errors"]:
            raise ValueError(validation["errors"])
        result = flow.run("Prepare a customer support summary.", run_id="case-001", trace=True)
        record = flow.get_run("case-001")
        """,
        "lightflow_workflows",
    )
    assert ns["result"].success and ns["result"].content == "Reviewed summary."
    assert [s.name for s in ns["result"].steps] == ["draft", "review"]
    assert ns["record"]["status"] == "success"
    assert ns["result"].steps["review"].status == "success"


def test_guardrails(seeds_block, loopback_server) -> None:
    ns = seeds_block(
        """
        from LightAgent import (
            LightAgent,
            high_risk_parameter_guardrail,
            output_redaction_guardrail,
            privacy_input_guardrail,
            sensitive_tool_confirmation_guardrail,
        )
        agent = LightAgent(
            model="gpt-4.1",
            api_key="your_api_key",
            base_url="your_base_url",
            input_guardrails=[privacy_input_guardrail()],
            tool_guardrails=[
                sensitive_tool_confirmation_guardrail(["transfer_money"], approved=False),
                high_risk_parameter_guardrail({
                    "amount": lambda value: value is not None and float(value) <= 1000,
                }),
            ],
            output_guardrails=[output_redaction_guardrail()],
        )
        """,
        "guardrails",
    )
    agent = ns["agent"]
    blocked = agent.run("My card number is 4111 1111 1111 1111", result_format="object")
    assert blocked.error["code"] == "LA-GUARDRAIL"
    assert loopback_server.requests == []  # refused before any model request
    loopback_server.reply("Write to ops@example.com for help.")
    redacted = agent.run("Who do I contact?")
    assert "ops@example.com" not in redacted


def test_runtime_hooks(seeds_block, loopback_server, capsys) -> None:
    loopback_server.reply("A safe summary.")
    ns = seeds_block(
        """
        from LightAgent import HookDecision, LightAgent, PolicyHook
        def redact_before_model(ctx):
            if ctx.phase != "before_model_request":
                return None
            params = dict(ctx.payload["params"])
            messages = list(params["messages"])
            messages[-1] = {
                **messages[-1],
                "content": messages[-1]["content"].replace("secret-token", "[REDACTED]"),
            }
            params["messages"] = messages
            return HookDecision.replace({"params": params})
        def block_dangerous_tool(ctx):
            if ctx.phase == "before_tool_call" and ctx.payload["tool_name"] == "delete_file":
                return HookDecision.block("delete_file requires manual approval")
            return None
        agent = LightAgent(
            model="gpt-4.1",
            api_key="your_api_key",
            base_url="your_base_url",
            hooks=[
                redact_before_model,
                PolicyHook(block_dangerous_tool, phases={"before_tool_call"}, timeout=2.0),
            ],
        )
        result = agent.run("Summarize this secret-token safely.", result_format="object", trace=True)
        print(result.content)
        print(result.trace)
        """,
        "runtime_hooks",
    )
    sent = loopback_server.requests[0]["messages"][-1]["content"]
    assert sent == "Summarize this [REDACTED] safely."
    assert ns["result"].content == "A safe summary."
    assert capsys.readouterr().out.startswith("A safe summary.\n")
    assert "hook_decision" in {e["type"] for e in ns["result"].trace}


def test_every_name_the_seeds_import_has_a_home(seeds_imports) -> None:
    import importlib

    for name, module in seeds_imports.items():
        assert hasattr(importlib.import_module(module), name), (name, module)
