"""ContextBudget / ContextCompactor: trimming, summaries and spilled tool output."""

from __future__ import annotations

import hashlib

import pytest
from lightagent.errors import ConfigurationError
from lightagent.events.projector import SUMMARY_PREFIX
from lightagent_runtime.compaction import ContextBudget, ContextCompactor


def _conversation(rounds=6, big=0):
    messages = [{"role": "system", "content": "be brief"}]
    for i in range(rounds):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        messages += [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": ("x" * big) if big else f"result {i}",
            },
            {"role": "assistant", "content": f"answer {i}"},
        ]
    return messages


def _valid(messages):
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            prev = messages[i - 1]
            assert prev["role"] in ("assistant", "tool"), messages
        if m["role"] == "assistant" and m.get("tool_calls"):
            assert messages[i + 1]["role"] == "tool"


def test_compact_keeps_system_and_tail_and_summarizes():
    seen = []

    def summarizer(removed):
        seen.append(removed)
        return f"{len(removed)} earlier messages"

    messages = _conversation()
    for keep in range(0, 26):
        result = ContextCompactor().compact(messages, max_messages=keep)
        assert result.messages[0]["role"] == "system"
        _valid(result.messages)
        assert result.removed_count + len(result.messages) == len(messages)
    result = ContextCompactor(summarizer).compact(messages, max_messages=5)
    assert result.summary == f"{result.removed_count} earlier messages"
    assert result.messages[1] == {"role": "user", "content": SUMMARY_PREFIX + result.summary}
    assert seen == [result.removed]


def test_oversized_tool_results_are_spilled_by_reference():
    messages = _conversation(rounds=2, big=20000)
    result = ContextCompactor(max_inline_tool_chars=1000).compact(messages, max_messages=100)
    assert len(result.spilled) == 2
    spill = result.spilled[0]
    assert spill["sha256"] == hashlib.sha256(("x" * 20000).encode()).hexdigest()
    assert spill["reference"] == f"tool-result:sha256:{spill['sha256']}" and spill["size"] == 20000
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert all(
        len(m["content"]) < 1200 and spill["reference"] in m["content"] for m in tool_messages
    )


def test_compact_to_budget_fits_and_calls_the_summarizer_sparingly():
    calls = []
    compactor = ContextCompactor(lambda removed: calls.append(1) or "short summary")
    budget = ContextBudget(max_tokens=200, reserved_output_tokens=50)
    result = compactor.compact_to_budget(_conversation(rounds=20), budget)
    assert budget.fits(result.messages) and result.removed_count > 0
    _valid(result.messages)
    assert len(calls) <= 3
    assert budget.estimate([]) == 1 and budget.available == 150


def test_bad_configuration_is_typed():
    for kwargs in ({"max_tokens": 0}, {"reserved_output_tokens": 9000}, {"chars_per_token": 0}):
        with pytest.raises(ConfigurationError):
            ContextBudget(**kwargs)
    with pytest.raises(ConfigurationError):
        ContextCompactor("not callable")
    with pytest.raises(ConfigurationError):
        ContextCompactor(max_inline_tool_chars=3)
