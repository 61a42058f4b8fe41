"""The seeds' guardrail templates, alone and on a LightAgent, and the plugin's registrations."""

from __future__ import annotations

import pytest
from lightagent import LightAgent, ScriptedModel, tool
from lightagent.errors import ConfigurationError
from lightagent_guardrails import (
    high_risk_parameter_guardrail,
    output_redaction_guardrail,
    plugin,
    privacy_input_guardrail,
    sensitive_tool_confirmation_guardrail,
)


@pytest.mark.parametrize(
    "text",
    [
        "my ssn is 123-45-6789",
        "card 4111 1111 1111 1111 please",
        "mail me at ann@example.com",
        "api_key=abcdef123456",
        "use sk-proj-abcdefghijklmnop",
    ],
)
def test_privacy_input_blocks_personal_data(text):
    assert not privacy_input_guardrail()(text, None).allowed


def test_privacy_input_allows_plain_text_and_custom_patterns():
    guard = privacy_input_guardrail()
    assert guard("what is the weather in Paris on 2024-05-01?", None).allowed
    custom = privacy_input_guardrail([r"project-x"], reason="codename")
    decision = custom("tell me about project-x", None)
    assert not decision.allowed and decision.reason == "codename"
    with pytest.raises(ConfigurationError):
        privacy_input_guardrail(["("])
    with pytest.raises(ConfigurationError):
        privacy_input_guardrail([""])


def test_sensitive_tool_confirmation():
    guard = sensitive_tool_confirmation_guardrail(["transfer_money"], approved=False)
    assert not guard({"tool_name": "transfer_money", "arguments": {}}, None).allowed
    assert guard({"tool_name": "lookup", "arguments": {}}, None).allowed
    ok = sensitive_tool_confirmation_guardrail(["transfer_money"], approved=True)
    assert ok({"tool_name": "transfer_money", "arguments": {}}, None).allowed
    small = sensitive_tool_confirmation_guardrail(
        "transfer_money", approved=lambda name, args, ctx: args.get("amount", 0) < 10
    )
    assert small({"tool_name": "transfer_money", "arguments": {"amount": 5}}, None).allowed
    with pytest.raises(ConfigurationError):
        sensitive_tool_confirmation_guardrail([])


def test_high_risk_parameters():
    guard = high_risk_parameter_guardrail(
        {
            "amount": lambda value: value is not None and float(value) <= 1000,
            "currency": ["EUR", "USD"],
        }
    )
    call = lambda **args: {"tool_name": "pay", "arguments": args}  # noqa: E731
    assert guard(call(amount=10, currency="EUR"), None).allowed
    assert not guard(call(amount=5000), None).allowed
    assert not guard(call(currency="BTC"), None).allowed
    assert not guard(call(amount="lots"), None).allowed  # a rule that raises does not allow
    assert guard(call(other=1), None).allowed
    with pytest.raises(ConfigurationError):
        high_risk_parameter_guardrail({})


def test_output_redaction():
    guard = output_redaction_guardrail()
    decision = guard("write to ann@example.com, ssn 123-45-6789", None)
    assert decision.value == "write to [redacted], ssn [redacted]"
    assert guard("nothing here", None).value is None
    assert output_redaction_guardrail([r"\d+"], replacement="#")("a1b22", None).value == "a#b#"


PAID: list[float] = []


@tool
def transfer_money(amount: float) -> str:
    """Transfer money."""
    PAID.append(amount)
    return "sent"


def test_seed_configuration_on_an_agent():
    PAID.clear()
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "transfer_money", "arguments": {"amount": 50}}]},
            "Write to bob@example.com when done.",
        ]
    )
    agent = LightAgent(
        model=model,
        tools=[transfer_money],
        input_guardrails=[privacy_input_guardrail()],
        tool_guardrails=[
            sensitive_tool_confirmation_guardrail(["transfer_money"], approved=False),
            high_risk_parameter_guardrail({"amount": lambda v: float(v) <= 1000}),
        ],
        output_guardrails=[output_redaction_guardrail()],
    )
    assert agent.run("pay the invoice") == "Write to [redacted] when done."
    assert PAID == []
    blocked = agent.run("my ssn is 123-45-6789", result_format="object")
    assert blocked.error["code"] == "LA-GUARDRAIL"


def test_plugin_registers_factories_lazily():
    seen: dict[str, str] = {}
    plugin.register_guardrails(lambda name, provider, **kw: seen.setdefault(name, provider))
    plugin.register_hooks(lambda name, provider, **kw: seen.setdefault(name, provider))
    assert set(seen) == {
        "privacy_input",
        "sensitive_tool_confirmation",
        "high_risk_parameter",
        "output_redaction",
        "tool_output_screen",
        "provenance_guard",
    }
    import importlib

    for ref in seen.values():
        module, _, attr = ref.partition(":")
        assert callable(getattr(importlib.import_module(module), attr))
