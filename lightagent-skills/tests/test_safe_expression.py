"""safe_expression: what it evaluates, what it refuses, and that no default tool runs code."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lightagent.errors import ValidationError
from lightagent.models.base import ToolCall
from lightagent.tools import AsyncToolDispatcher
from lightagent_skills.expression import (
    SafeExpressionError,
    default_registry,
    evaluate_safe_expression,
    safe_expression,
)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("45 * 9827", 442215),
        ("1 + 2 * 3 - 4 / 2", 5.0),
        ("7 // 2, 7 % 2, 2 ** 10", (3, 1, 1024)),
        ("-3 + +2", -1),
        ("(1 < 2) and not (3 == 4)", True),
        ("1 < 2 < 3 > 4", False),
        ("0 or 'fallback'", "fallback"),
        ("'ab' * 3 + 'c'", "abababc"),
        ("[1, 2, 3][1:]", [2, 3]),
        ("{'a': 1, 'b': [2, 3]}['b'][0]", 2),
        ("'x' in 'xyz' and 4 not in [1, 2]", True),
        ("max(3, 7) / 2 + abs(-1) + round(2.567, 2)", 7.07),
        ("sum([1, 2, 3]) + len('abcd') + min(4, 5)", 14),
        ("sqrt(16) + pi - pi", 4.0),
        ("1 if 2 > 1 else 0", 1),
        ("0xff & 0x0f | 0x30 ^ 1", 63),
        ("2 ** -1", 0.5),
        ("None", None),
    ],
)
def test_evaluates_data_only_expressions(expression, value):
    result = safe_expression(expression)
    assert result == pytest.approx(value) if isinstance(value, float) else result == value


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('echo hi')",
        "open('/etc/passwd').read()",
        "eval('1+1')",
        "exec('x=1')",
        "(lambda: 1)()",
        "[x for x in range(3)]",
        "().__class__.__bases__[0].__subclasses__()",
        "'abc'.upper()",
        "x",
        "globals()",
        "getattr(1, 'real')",
        "max(*[1, 2])",
        "round(1.5, ndigits=1)",
        "{**{'a': 1}}",
        "f'{1}'",
        "b'bytes'",
        "1j * 2",
        "(x := 3)",
        "...",
        "import os",
        "x = 1",
        "a.b",
    ],
)
def test_refuses_everything_else(expression):
    with pytest.raises(SafeExpressionError) as info:
        evaluate_safe_expression(expression)
    assert info.value.code == "LA-EXPRESSION"
    assert isinstance(info.value, ValidationError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("9 ** 9 ** 9", "bits"),
        ("2 ** 5000", "bits"),
        ("10.0 ** 400", "too large"),
        ("'a' * 10001", "repetition"),
        ("[0] * 1000", "repetition"),
        ("1 << 100000", "shift"),
        ("(2 ** 4000) * (2 ** 4000)", "bits"),
        ("1 + " * 200 + "1", "parts"),
        ("1" * 5000, "longer than"),
        ("1 / 0", "division by zero"),
        ("round(5, -1000000)", "digits"),
        ("[" * 40 + "]" * 40, "deeper"),
        ("", "empty"),
        ("1 +", "not a valid expression"),
        ("min([])", "ValueError"),
        ("1 + 'a'", "TypeError"),
        ("[1][5]", "IndexError"),
        ("sqrt(-1)", "ValueError"),
    ],
)
def test_limits_and_errors(expression, fragment):
    with pytest.raises(SafeExpressionError) as info:
        evaluate_safe_expression(expression)
    assert fragment in info.value.message


def test_non_string_input():
    with pytest.raises(SafeExpressionError):
        evaluate_safe_expression(12)  # type: ignore[arg-type]


def test_no_default_tool_can_execute_code(tmp_path):
    """Every tool a default registry offers is fed code-execution payloads; none runs."""
    marker = tmp_path / "pwned"
    payloads = [
        f"__import__('os').system('touch {marker}')",
        f"open('{marker}', 'w').write('x')",
        f"exec(\"open('{marker}','w')\")",
        "().__class__.__mro__[1].__subclasses__()",
    ]
    reg = default_registry()
    assert reg.names() == ["safe_expression"]
    dispatcher = AsyncToolDispatcher(reg)
    calls = []
    for tool_obj in reg.tools():
        string_params = [
            n for n, p in tool_obj.parameters["properties"].items() if p.get("type") == "string"
        ]
        for i, payload in enumerate(payloads):
            args = {name: payload for name in string_params}
            calls.append(
                ToolCall(id=f"{tool_obj.name}-{i}", name=tool_obj.name, arguments=json.dumps(args))
            )
    outcomes = dispatcher.run_calls(calls)
    assert len(outcomes) == len(payloads) * len(reg)
    assert all(o.error is not None and o.output.startswith("Error [LA-") for o in outcomes)
    assert not marker.exists()
    for name in (
        "execute_python_code",
        "execute_python_file",
        "execute_python_code_stream",
        "upload_file_to_oss",
    ):
        assert name not in reg


def test_safe_expression_is_a_tool_with_a_schema():
    schema = safe_expression.openai_schema()["function"]
    assert schema["name"] == "safe_expression"
    assert schema["parameters"]["required"] == ["expression"]
    assert (
        schema["parameters"]["properties"]["expression"]["description"]
        == "The expression to evaluate."
    )


# Property tests: bad input never escapes as anything but a typed error.
ATOMS = st.sampled_from(
    [
        "1",
        "2",
        "9",
        "0",
        "-1",
        "2.5",
        "'a'",
        "'xyz'",
        "x",
        "True",
        "None",
        "[1, 2]",
        "{'k': 1}",
        "()",
        "pi",
    ]
)
OPS = st.sampled_from(
    [
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "<<",
        ">>",
        "&",
        "|",
        "^",
        "<",
        "==",
        " and ",
        " or ",
        " in ",
    ]
)


@st.composite
def expressions(draw):
    parts = [draw(ATOMS)]
    for _ in range(draw(st.integers(0, 8))):
        parts += [draw(OPS), draw(ATOMS)]
    text = "".join(parts)
    if draw(st.booleans()):
        text = f"({text})" + draw(OPS) + draw(ATOMS)
    return text


@settings(max_examples=300, deadline=None)
@given(expressions())
def test_safe_expression_only_returns_or_raises_typed(expression):
    try:
        evaluate_safe_expression(expression)
    except SafeExpressionError as exc:
        assert exc.code == "LA-EXPRESSION"


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_safe_expression_on_arbitrary_text(text):
    try:
        evaluate_safe_expression(text)
    except SafeExpressionError:
        pass


def test_the_tool_name_resolves_through_the_plugin_registry() -> None:
    from lightagent import LightAgent, ScriptedModel

    call = {"tool_calls": [{"name": "safe_expression", "arguments": {"expression": "2 * (3 + 4)"}}]}
    model = ScriptedModel()
    model.add(call, "14", "again 14")
    agent = LightAgent(model=model, tools=["safe_expression"])
    result = agent.run("2*(3+4)?", result_format="object")
    assert result.content == "14" and result.tool_calls[0]["output"] == "14"
    agent.run("2*(3+4)?", tools=["safe_expression"])  # a name already on the agent
