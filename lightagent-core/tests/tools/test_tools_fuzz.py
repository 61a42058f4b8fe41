"""Property tests: bad input never escapes as anything but a typed error."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from lightagent.errors import LightAgentError
from lightagent.tools import tool
from lightagent.tools.argcheck import check_arguments


@tool
def target(a: int, b: list[str] | None = None, c: bool = False) -> str:
    """Target."""
    return ""


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_argument_validation_never_crashes(value):
    for raw in (value, json.dumps(value)):
        try:
            target.validate_arguments(raw)
        except LightAgentError as exc:
            assert exc.code == "LA-TOOL-ARGS"


SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 0},
        "xs": {"type": "array", "items": {"type": "number"}},
        "o": {"type": "object", "properties": {"k": {"enum": ["a", "b"]}}, "required": ["k"]},
    },
    "required": ["n"],
    "additionalProperties": False,
}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["n", "xs", "o", "z"]), JSON, max_size=4))
def test_json_schema_checker_never_crashes(arguments):
    value, errors = check_arguments(SCHEMA, arguments)
    assert isinstance(errors, list)
    if not errors:
        assert isinstance(value["n"], int) and value["n"] >= 0
