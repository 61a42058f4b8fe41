"""Reliability: identifiers are checked over their whole length.

``re.match`` with a pattern ending in ``$`` also accepts the text followed by one
newline (``$`` matches before a final ``\\n``). An identifier that names a file, a row
or a provider must not slip through with it: ``"s-1\\n"`` is not ``"s-1"``.
"""

from __future__ import annotations

import pytest
from lightagent.errors import ConfigurationError, ValidationError
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.sql_store import SqliteSessionStore
from lightagent.registry import Registry


@pytest.mark.parametrize("kind", ["memory", "jsonl", "sqlite"])
@pytest.mark.parametrize("bad", ["s-1\n", "s-1\r\n", "\n"])
def test_session_ids_with_a_line_break_are_refused(tmp_path, kind, bad):
    store = {
        "memory": lambda: InMemorySessionStore(),
        "jsonl": lambda: JsonlSessionStore(tmp_path / "j"),
        "sqlite": lambda: SqliteSessionStore(tmp_path / "s.db"),
    }[kind]()
    for call in (
        lambda: store.append(bad, [{"type": "n.e"}]),
        lambda: store.events(bad),
        lambda: store.last_sequence(bad),
    ):
        with pytest.raises(ValidationError) as info:
            call()
        assert info.value.code == "LA-VALIDATION" and info.value.hint
    assert store.list_sessions() == []
    store.close()


def test_event_types_with_a_line_break_are_refused():
    store = InMemorySessionStore()
    with pytest.raises(ValidationError):
        store.append("s", [{"type": "tool.completed\n"}])
    assert store.last_sequence("s") == 0


def test_provider_names_and_references_with_a_line_break_are_refused():
    reg = Registry()
    with pytest.raises(ConfigurationError):
        reg.register("model", "fast\n", object(), plugin="p")
    with pytest.raises(ConfigurationError):
        reg.register("model", "fast", "package.module:attribute\n", plugin="p")
    reg.register("model", "fast", object(), plugin="p")  # the clean name still works
