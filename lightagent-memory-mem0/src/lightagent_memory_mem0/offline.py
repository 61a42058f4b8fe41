"""``echo_facts``: a stand-in for mem0's fact-extraction LLM, for tests and offline demos.

Give it to a :class:`~lightagent_contracts.LoopbackServer` as the reply of the model
mem0 uses (``server.route("mem0-llm", echo_facts)``): it reads the new messages out of
mem0's extraction prompt and answers each user message as one fact, in the JSON shape
mem0 expects. Deterministic, and no network.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["echo_facts"]

_SECTION = re.compile(r"## New Messages\n(.*?)(?:\n\n## |\Z)", re.S)
_ROLE = re.compile(r"^(user|assistant|system): ?", re.M)


def echo_facts(body: dict[str, Any]) -> str:
    """The extraction answer for one chat request body: ``{"memory": [{"text": ...}]}``."""
    prompt = "\n".join(
        str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "user"
    )
    found = _SECTION.search(prompt)
    facts = []
    if found:
        parts = _ROLE.split(found.group(1))
        # split() gives ["", role, text, role, text, ...]
        for role, text in zip(parts[1::2], parts[2::2], strict=False):
            text = text.strip()
            if role == "user" and text:
                facts.append({"text": text})
    return json.dumps({"memory": facts})
