"""What the swarm tests share: a recording scripted model and a transfer call."""

from __future__ import annotations

from typing import Any

from lightagent import ScriptedModel


def transfer(to: str, reason: str = "their job") -> dict[str, Any]:
    """A model reply that hands the conversation to agent ``to``."""
    return {"tool_calls": [{"name": f"transfer_to_{to}", "arguments": {"reason": reason}}]}


class Recorder:
    """A function-driven model that keeps every request it answered."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.requests: list[Any] = []
        self.model = ScriptedModel(self._answer)

    def _answer(self, request: Any) -> Any:
        self.requests.append(request)
        assert self.replies, "unexpected model call"
        return self.replies.pop(0)
