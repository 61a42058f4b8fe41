"""A toolset result's content parts for the model (``metadata["model_parts"]``): a tool
message is text only, so the loop sends them in one user message after the round."""

from __future__ import annotations

from lightagent import LightAgent, ScriptedModel
from lightagent.toolsets import BaseToolset, ToolDefinition, ToolResult

PART = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


class Camera(BaseToolset):
    def list_tools(self):
        return [ToolDefinition("snap", "Take a picture.", {"type": "object", "properties": {}})]

    async def call_tool(self, name, arguments, context):
        return ToolResult(content="[image attached]", metadata={"model_parts": [PART]})


def test_model_parts_follow_the_tool_messages_and_stay_out_of_events():
    calls = {"tool_calls": [{"name": "snap", "arguments": {}}, {"name": "snap", "arguments": {}}]}
    model = ScriptedModel([calls, "a cat"])
    agent = LightAgent(model=model, tools=[Camera(namespace="cam")])
    result = agent.run("look", result_format="object", trace=True)
    messages = model.requests[1].messages
    assert [m["role"] for m in messages[-4:]] == ["assistant", "tool", "tool", "user"]
    content = messages[-1]["content"]
    assert [p["type"] for p in content] == ["text", "image_url", "text", "image_url"]
    assert messages[-3]["tool_call_id"] in content[0]["text"]
    events = [e["data"] for e in result.trace if e["type"] == "tool_result"]
    assert events and all("model_parts" not in str(e) for e in events)
