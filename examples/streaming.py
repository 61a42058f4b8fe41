"""The seeds' "Streaming API", with lightagent imports.

``agent.run(query, stream=True)`` yields OpenAI ``chat.completion.chunk`` dicts (and, in
tool rounds, the seeds' tool dicts); ``result_format="event"`` yields typed StreamEvents.
Offline by default; set OPENAI_API_KEY or LIGHTAGENT_BASE_URL to stream from a real model.
"""

from __future__ import annotations

import os

from lightagent import LightAgent, ScriptedModel

REPORT = (
    "AI agents combine a language model with tools. The model decides which tool to call, "
    "reads the result and continues until it can answer."
)


def model() -> object:
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("LIGHTAGENT_BASE_URL"):
        return os.environ.get("LIGHTAGENT_MODEL", "gpt-4.1")
    return ScriptedModel([REPORT, REPORT])


agent = LightAgent(model=model())

# OpenAI-compatible chunks: code written for the OpenAI stream format works unchanged.
for chunk in agent.run("Write a short report about AI agents.", stream=True):
    if "choices" not in chunk:  # a tool call / tool result dict between model turns
        print(f"\n[{chunk.get('name')}] {chunk}")
        continue
    print(chunk["choices"][0]["delta"].get("content") or "", end="", flush=True)
print()

# Typed events.
for event in agent.run("Write a short report about AI agents.", stream=True, result_format="event"):
    if event.type == "content":
        print(event.data, end="", flush=True)
    elif event.type == "done":
        print(f"\n[done] usage={event.data['usage']}")
