"""The SessionStore contract suite fails against broken stores (run in a separate pytest)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

BROKEN = textwrap.dedent(
    """
    import pytest
    from lightagent_contracts.suites.session_store import SessionStoreContract
    from lightagent.events.memory_store import InMemorySessionStore
    from lightagent.events.store import SessionStoreBase

    class IgnoresExpected(InMemorySessionStore):
        def append(self, session_id, events, *, expected_sequence=None):
            return super().append(session_id, events, expected_sequence=None)

    class SkipsRedaction(InMemorySessionStore):
        def _prepare(self, session_id, events, last):
            out = SessionStoreBase._prepare(self, session_id, [], last)
            from lightagent.events.store import _coerce
            for i, item in enumerate(events, start=1):
                ev = _coerce(item)
                ev.session_id, ev.sequence = session_id, last + i
                out.append(ev)
            return out

    class TestIgnoresExpected(SessionStoreContract):
        @pytest.fixture
        def make_store(self):
            shared = IgnoresExpected()
            return lambda: shared

    class TestSkipsRedaction(SessionStoreContract):
        @pytest.fixture
        def make_store(self):
            shared = SkipsRedaction()
            return lambda: shared
    """
)


@pytest.mark.parametrize(
    ("klass", "expected_failure"),
    [
        ("TestIgnoresExpected", "test_stale_expected_sequence_conflicts_and_writes_nothing"),
        ("TestSkipsRedaction", "test_secrets_are_redacted_before_persisting"),
    ],
)
def test_contract_suite_fails_broken_stores(tmp_path, klass, expected_failure):
    module = tmp_path / "test_broken_store.py"
    module.write_text(BROKEN)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--import-mode=importlib",
            f"{module}::{klass}",
            # The model test fails a broken store too, then spends seconds shrinking it.
            "--deselect",
            f"{module}::{klass}::test_random_operations_match_a_model",
            "-rf",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert f"FAILED test_broken_store.py::{klass}::{expected_failure}" in proc.stdout, proc.stdout[
        -3000:
    ]
