"""The seeds' "Tool Example", with lightagent imports.

Offline by default (a scripted model calls the tool, then answers from its output). Set
OPENAI_API_KEY, or LIGHTAGENT_BASE_URL for any OpenAI-compatible server, to ask a real
model; LIGHTAGENT_MODEL picks the model (default gpt-4.1).
"""

from __future__ import annotations

import os

from lightagent import LightAgent, ScriptedModel


# Define Tool
def get_weather(city_name: str) -> str:
    """
    Get the current weather for `city_name`
    """
    return f"Query result: {city_name} is sunny."


# Define tool information inside the function (type checkers do not model attributes set on
# a function, hence the ignore; `@tool` is the typed spelling of the same thing)
get_weather.tool_info = {  # type: ignore[attr-defined]
    "tool_name": "get_weather",
    "tool_description": "Get current weather information for the specified city.",
    "tool_params": [
        {
            "name": "city_name",
            "description": "The name of the city to query",
            "type": "string",
            "required": True,
        },
    ],
}

tools = [get_weather]


def scripted_reply(request):
    """Call get_weather first; once its result is in, answer from it."""
    last = request.messages[-1]
    if last["role"] == "tool":
        return f"Here is the weather you asked for. {last['content']}"
    return {"tool_calls": [{"name": "get_weather", "arguments": {"city_name": "Shanghai"}}]}


def model() -> object:
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("LIGHTAGENT_BASE_URL"):
        return os.environ.get("LIGHTAGENT_MODEL", "gpt-4.1")
    return ScriptedModel(scripted_reply)


# Initialize Agent
agent = LightAgent(model=model(), tools=tools)
# Run Agent
response = agent.run("Please check the weather in Shanghai.")
print(response)
