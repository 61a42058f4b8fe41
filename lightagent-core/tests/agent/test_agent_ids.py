"""Tool-call idempotency keys: canonical over argument spelling, distinct over intent."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from lightagent.loop import idempotency_key

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=6), json_values, max_size=4)


@given(arguments)
def test_key_ignores_spelling_of_the_same_arguments(args: dict) -> None:
    compact = json.dumps(args, separators=(",", ":"))
    spaced = json.dumps(dict(reversed(list(args.items()))), indent=2)
    assert idempotency_key("run_1", 0, "t", compact) == idempotency_key("run_1", 0, "t", spaced)
    assert idempotency_key("run_1", 0, "t", compact) == idempotency_key("run_1", 0, "t", args)


@given(arguments, st.integers(min_value=0, max_value=50))
def test_key_changes_with_run_position_and_name(args: dict, index: int) -> None:
    key = idempotency_key("run_1", index, "t", args)
    assert len(key) == 64
    assert key != idempotency_key("run_2", index, "t", args)
    assert key != idempotency_key("run_1", index + 1, "t", args)
    assert key != idempotency_key("run_1", index, "u", args)


def test_invalid_json_text_still_gives_a_key() -> None:
    assert idempotency_key("r", 0, "t", "{'a': 1") != idempotency_key("r", 0, "t", "{'a': 2")
    assert idempotency_key("r", 0, "t", "") == idempotency_key("r", 0, "t", {})
