"""The seeds' "Hello World", with lightagent imports.

Offline by default (a scripted model answers). Set OPENAI_API_KEY, or LIGHTAGENT_BASE_URL
for any OpenAI-compatible server (vLLM, llama.cpp, Ollama …), to ask a real model;
LIGHTAGENT_MODEL picks the model (default gpt-4.1).
"""

from __future__ import annotations

import os

from lightagent import LightAgent, ScriptedModel


def model() -> object:
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("LIGHTAGENT_BASE_URL"):
        return os.environ.get("LIGHTAGENT_MODEL", "gpt-4.1")  # a name: the OpenAI-compatible client
    return ScriptedModel(["Hello! I am LightAgent, a helpful agent. How can I help you today?"])


# Initialize Agent
agent = LightAgent(model=model())
# Run Agent
response = agent.run("Hello, who are you?")
print(response)
