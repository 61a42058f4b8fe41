"""The loop asks toolsets for tools at each model request (cached until a change), routes
each call to its toolset, names collisions visibly, and treats function tools as before."""

from __future__ import annotations

import asyncio
import types

import pytest
from lightagent import LightAgent, LightAgentError, ScriptedModel, hookimpl, tool
from lightagent.plugins import PluginHost, reset_host
from lightagent.toolsets import BaseToolset, FunctionToolset, ToolDefinition, ToolResult

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class Echo(BaseToolset):
    """A static toolset: no lifecycle, called on the caller's own loop."""

    def __init__(self, namespace="echo", names=("echo",), **kw):
        super().__init__(namespace=namespace, **kw)
        self.names = list(names)
        self.listed = 0
        self.calls = []

    def list_tools(self):
        self.listed += 1
        return [ToolDefinition(n, f"Echo ({n}).", SCHEMA) for n in self.names]

    async def call_tool(self, name, arguments, context):
        self.calls.append((name, arguments, context, asyncio.get_running_loop()))
        return f"{self.namespace}:{name}:{arguments['text']}"


def _calls(*names):
    return {"tool_calls": [{"name": n, "arguments": {"text": "hi"}} for n in names]}


def test_static_toolset_is_listed_once_and_called_on_the_callers_loop():
    echo = Echo()
    agent = LightAgent(
        model=ScriptedModel([_calls("echo"), "a", _calls("echo"), "b"]), tools=[echo]
    )
    assert agent.run("x") == "a"

    async def main():
        return await agent.arun("y"), asyncio.get_running_loop()

    answer, loop = asyncio.run(main())
    assert answer == "b"
    assert echo.listed == 1, "a static toolset is listed once, not per request"
    assert echo.calls[-1][3] is loop, "a static toolset runs on the caller's loop (no bridge)"


def test_call_context_names_the_run():
    echo = Echo()
    agent = LightAgent(model=ScriptedModel([_calls("echo"), "done"]), tools=[echo])
    result = agent.run("x", user_id="alice", result_format="object", trace=True)
    context = echo.calls[0][2]
    assert context.run_id == result.run_id and context.trace_id == result.trace_id
    assert context.user_id == "alice" and context.agent_name == agent.name
    assert context.idempotency_key == result.tool_calls[0]["idempotency_key"]


def test_change_notification_refreshes_the_tool_list_between_requests():
    echo = Echo()
    seen = []

    def reply(request):
        seen.append(sorted(t["function"]["name"] for t in request.tools or ()))
        if len(seen) == 1:
            echo.names.append("echo2")
            echo.notify_changed()  # e.g. an MCP server's tools/list_changed
            return _calls("echo")
        return "done"

    agent = LightAgent(model=ScriptedModel(reply), tools=[echo])
    result = agent.run("x", result_format="object", trace=True)
    assert seen == [["echo"], ["echo", "echo2"]]
    assert "toolsets_changed" in [e["type"] for e in result.trace]


def test_collisions_are_renamed_and_reported_never_shadowed():
    @tool
    def echo(text: str) -> str:
        """The agent's own echo."""
        return f"own:{text}"

    a, b = Echo("alpha"), Echo("beta")
    model = ScriptedModel([_calls("echo", "alpha__echo", "beta__echo"), "done"])
    agent = LightAgent(model=model, tools=[echo, a, b])
    result = agent.run("x", result_format="object", trace=True)
    assert [c["output"] for c in result.tool_calls] == [
        "own:hi",
        "alpha:echo:hi",
        "beta:echo:hi",
    ]
    offered = [t["function"]["name"] for t in model.requests[0].tools]
    assert offered == ["echo", "alpha__echo", "beta__echo"]
    conflicts = [e["data"] for e in result.trace if e["type"] == "toolset_conflict"]
    assert conflicts == [
        {
            "name": "echo",
            "offered_by": ["agent", "alpha", "beta"],
            "renamed": {"alpha": "alpha__echo", "beta": "beta__echo"},
        }
    ]


def test_a_name_still_taken_leaves_that_tool_out_never_the_run():
    first, second = Echo("same"), Echo("same", names=("echo", "other"))
    model = ScriptedModel([_calls("same__echo"), "done"])
    agent = LightAgent(model=model, tools=[first, second])
    result = agent.run("x", result_format="object", trace=True)
    assert result.content == "done" and result.tool_calls[0]["output"] == "same:echo:hi"
    assert len(first.calls) == 1 and not second.calls
    assert [t["function"]["name"] for t in model.requests[0].tools] == ["same__echo", "other"]
    (dropped,) = [e["data"] for e in result.trace if e["type"] == "toolset_tool_dropped"]
    assert dropped == {
        "toolset": "same",
        "tool": "echo",
        "exposed": None,
        "code": "LA-TOOLSET-CONFLICT",
        "reason": "the name 'same__echo' is taken by toolset 'same'",
    }


def test_invalid_names_are_fitted_by_the_rule_local_tools_follow():
    echo = Echo("odd", names=("a b", "x.y", "ok", "\u200bok", "\u00e9\u00e9"))
    model = ScriptedModel([_calls("a_b", "x_y"), "done"])
    result = LightAgent(model=model, tools=[echo]).run("x", result_format="object", trace=True)
    assert [c[0] for c in echo.calls] == ["a b", "x.y"]
    assert [t["function"]["name"] for t in model.requests[0].tools] == ["a_b", "x_y", "ok"]
    events = [(e["type"], e["data"]["tool"]) for e in result.trace if "toolset_tool" in e["type"]]
    assert events == [
        ("toolset_tool_dropped", "\\u200bok"),
        ("toolset_tool_dropped", "\u00e9\u00e9"),
        ("toolset_tool_renamed", "a b"),
        ("toolset_tool_renamed", "x.y"),
    ]

    @tool
    def a_b(text: str) -> str:
        """A local tool with the fitted name: it keeps it, the toolset's gets its namespace."""
        return text

    model = ScriptedModel(["done"])
    result = LightAgent(model=model, tools=[a_b, Echo("odd", names=("a b",))]).run(
        "x", result_format="object", trace=True
    )
    assert [t["function"]["name"] for t in model.requests[0].tools] == ["a_b", "odd__a_b"]
    (renamed,) = [e["data"] for e in result.trace if e["type"] == "toolset_tool_renamed"]
    assert renamed["exposed"] == "odd__a_b"

    def shout(text: str) -> str:
        """A local tool: the same name is refused outright."""
        return text

    with pytest.raises(LightAgentError) as refused:
        tool(name="a b")(shout)
    assert refused.value.code == "LA-TOOL-DEFINITION"


def test_namespace_tools_always_prefixes():
    echo = Echo("units", namespace_tools=True)
    model = ScriptedModel([_calls("units__echo"), "ok"])
    agent = LightAgent(model=model, tools=[echo])
    assert agent.run("x") == "ok"
    assert echo.calls[0][0] == "echo", "the toolset is called with its own name"


def test_unknown_tool_is_the_typed_not_found_error_for_the_model():
    model = ScriptedModel([_calls("nope"), "recovered"])
    agent = LightAgent(model=model, tools=[Echo()])
    result = agent.run("x", result_format="object")
    assert result.content == "recovered"
    assert result.tool_calls[0]["error"]["code"] == "LA-TOOL-NOT-FOUND"
    assert "echo" in result.tool_calls[0]["output"]


def test_arguments_are_validated_against_the_toolset_schema_before_the_call():
    echo = Echo()
    bad = {"tool_calls": [{"name": "echo", "arguments": {"wrong": 1}}]}
    agent = LightAgent(model=ScriptedModel([bad, "ok"]), tools=[echo])
    result = agent.run("x", result_format="object")
    assert result.tool_calls[0]["error"]["code"] == "LA-TOOL-ARGS"
    assert echo.calls == []


class Failing(BaseToolset):
    namespace = "failing"

    def list_tools(self):
        return [ToolDefinition("boom", "Fails.", {"type": "object", "properties": {}})]

    def call_tool(self, name, arguments, context):  # sync is fine too
        return ToolResult("the backend said no", is_error=True)


def test_tool_result_errors_and_sync_toolsets():
    agent = LightAgent(model=ScriptedModel([_calls("boom"), "ok"]), tools=[Failing()])
    result = agent.run("x", result_format="object")
    assert result.tool_calls[0]["error"]["code"] == "LA-TOOL"
    assert "the backend said no" in result.tool_calls[0]["output"]


class Detailed(BaseToolset):
    namespace = "detailed"

    def list_tools(self):
        return [ToolDefinition("look", "Looks.", {"type": "object", "properties": {}})]

    def call_tool(self, name, arguments, context):
        return ToolResult("seen", structured={"seen": True}, metadata={"source": "cam"})


def test_a_results_structured_content_and_metadata_reach_its_tool_result_event():
    model = ScriptedModel([_calls("look"), "ok"])
    result = LightAgent(model=model, tools=[Detailed()]).run(
        "x", result_format="object", trace=True
    )
    (event,) = [e["data"] for e in result.trace if e["type"] == "tool_result"]
    assert event["output"] == "seen"
    assert event["structured"] == {"seen": True} and event["metadata"] == {"source": "cam"}
    assert model.requests[1].messages[-1]["content"] == "seen"


def test_detailed_output_survives_copy_and_pickle():
    import copy
    import pickle

    from lightagent.tools.output import DetailedOutput

    text = DetailedOutput("seen", {"structured": {"seen": True}})
    for made in (copy.deepcopy(text), pickle.loads(pickle.dumps(text))):
        assert made == "seen" and made.details == {"structured": {"seen": True}}


def test_function_toolset_is_a_toolset_too():
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    ts = FunctionToolset([add], namespace="math", namespace_tools=True)
    assert [d.name for d in ts.list_tools()] == ["add"]
    agent = LightAgent(
        model=ScriptedModel(
            [{"tool_calls": [{"name": "math__add", "arguments": {"a": 2, "b": "3"}}]}, "ok"]
        ),
        tools=[ts],
    )
    result = agent.run("x", result_format="object")
    assert result.tool_calls[0]["output"] == "5"


def test_definitions_keep_schemas_whole_and_hash_them():
    deep = {
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"$ref": "#/$defs/row"}},
        },
        "$defs": {"row": {"type": "object", "properties": {"k": {"enum": ["a", "b"]}}}},
    }

    class Deep(Echo):
        def list_tools(self):
            return [ToolDefinition("table", "Rows.", deep)]

    model = ScriptedModel(["ok"])
    LightAgent(model=model, tools=[Deep("deep")]).run("x")
    assert model.requests[0].tools[0]["function"]["parameters"] == deep
    one, two = ToolDefinition("t", "d", deep), ToolDefinition("t", "d", deep)
    assert one.definition_hash == two.definition_hash
    assert ToolDefinition("t", "d2", deep).definition_hash != one.definition_hash


def test_run_tools_refuses_toolsets():
    agent = LightAgent(model=ScriptedModel(["ok"]))
    with pytest.raises(LightAgentError) as info:
        agent.run("x", tools=[Echo()])
    assert info.value.code == "LA-CONFIG"


def test_add_toolset_refuses_a_plain_function():
    agent = LightAgent(model=ScriptedModel([]))
    with pytest.raises(LightAgentError) as info:
        agent.add_toolset(len)
    assert info.value.code == "LA-CONFIG"


class Configured(Echo):
    def __init__(self, *, prefix: str, namespace: str = "configured"):
        super().__init__(namespace)
        self.prefix = prefix

    async def call_tool(self, name, arguments, context):
        return f"{self.prefix}{arguments['text']}"


@pytest.fixture
def toolset_plugin():
    @hookimpl
    def register_toolsets(register):
        register("configured", Configured)

    module = types.ModuleType("toolset_plugin")
    module.register_toolsets = register_toolsets
    reset_host(PluginHost(entry_points=False, plugins=[("toolset-plugin", module)]))
    yield
    reset_host(None)


def test_plugins_register_toolset_factories_built_with_configuration(toolset_plugin):
    agent = LightAgent(
        model=ScriptedModel([_calls("echo"), "ok"]), tools=[("configured", {"prefix": ">> "})]
    )
    result = agent.run("x", result_format="object")
    assert result.tool_calls[0]["output"] == ">> hi"
    with pytest.raises(LightAgentError) as info:
        LightAgent(model=ScriptedModel([]), tools=["configured"])
    assert info.value.code == "LA-CONFIG"
    assert "'configured'" in info.value.message and "'prefix'" in info.value.message


class Reporting(BaseToolset):
    """A loop-bound toolset whose call reports steps through ``context.emit``."""

    loop_bound = True

    def list_tools(self):
        return [ToolDefinition("work", "Work in steps.", SCHEMA)]

    async def call_tool(self, name, arguments, context):
        for step in (1, 2, 3):
            context.emit("work.step", {"step": step})
        return "worked"


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_a_toolset_call_emits_events_into_the_run_from_its_own_loop(driver):
    seen = []

    class Observer:
        def on_event(self, run, event):
            seen.append(event["type"])

    agent = LightAgent(
        model=ScriptedModel([_calls("work"), "done"]), tools=[Reporting()], observers=[Observer()]
    )
    with agent:
        if driver == "run":
            result = agent.run("x", result_format="object", trace=True)
        else:
            result = asyncio.run(agent.arun("x", result_format="object", trace=True))
    steps = [e["data"]["step"] for e in result.trace if e["type"] == "work.step"]
    assert steps == [1, 2, 3]
    types_ = [e["type"] for e in result.trace]
    assert types_.index("tool_call") < types_.index("work.step") < types_.index("tool_result")
    assert seen.count("work.step") == 3
    assert [e["seq"] for e in result.trace] == sorted(e["seq"] for e in result.trace)


def test_a_tool_a_toolset_withholds_is_a_dropped_event_naming_why():
    echo = Echo("srv", names=("echo",))
    echo.withheld = {"research": "the server runs it only as a task"}
    model = ScriptedModel(["done"])
    result = LightAgent(model=model, tools=[echo]).run("x", result_format="object", trace=True)
    assert [t["function"]["name"] for t in model.requests[0].tools] == ["echo"]
    (dropped,) = [e["data"] for e in result.trace if e["type"] == "toolset_tool_dropped"]
    assert dropped == {
        "toolset": "srv",
        "tool": "research",
        "exposed": None,
        "code": "LA-TOOL-DEFINITION",
        "reason": "the server runs it only as a task",
    }


class _Stalls(Echo):
    """A toolset whose listing fails with its own ``TimeoutError``."""

    def list_tools(self):
        raise TimeoutError("list stalled")


def test_view_and_aview_keep_a_listing_failure_as_the_toolsets_own_error():
    from lightagent.tools.registry import ToolRegistry
    from lightagent.toolsets.router import ToolsetRouter

    base = ToolRegistry()
    sync_router, async_router = ToolsetRouter(), ToolsetRouter()
    sync_router.add(_Stalls(namespace="slow"))
    async_router.add(_Stalls(namespace="slow"))
    expected = [
        {
            "toolset": "slow",
            "error": {"code": "LA-TOOLSET", "message": "TimeoutError: list stalled"},
        }
    ]
    assert sync_router.view(base).errors == expected
    assert asyncio.run(async_router.aview(base)).errors == expected
