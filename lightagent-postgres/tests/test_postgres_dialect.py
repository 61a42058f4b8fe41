"""What the plugin registers, how the core reaches it, and the typed errors on the way."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from lightagent import ConfigurationError, LightAgentError, SqlSessionStore
from lightagent.plugins import get_registry
from lightagent.sql_conn import open_database
from lightagent_postgres import PostgresDatabase, PostgresSessionStore


def test_the_plugin_registers_the_store_for_its_url_schemes() -> None:
    registry = get_registry()
    for name in ("postgresql://", "postgres://", "postgres"):
        assert registry.get("session_store", name).load() is PostgresSessionStore
    assert registry.get("session_store", "postgresql://").plugin == "lightagent-postgres"


def test_the_core_opens_postgresql_through_the_plugin() -> None:
    # Building a pool connects to nothing: the first transaction does.
    for url in ("postgresql+psycopg://u@127.0.0.1:1/db", "postgres://u@127.0.0.1:1/db"):
        db = open_database(url, busy_timeout_ms=2000, needed_by="a test")
        assert isinstance(db, PostgresDatabase)
        assert db.conninfo == "postgresql://u@127.0.0.1:1/db" and db.connect_timeout == 2
        assert db.sql("a = ? AND b = ?") == "a = %s AND b = %s" and db.lock_rows == " FOR UPDATE"


def test_another_driver_is_refused_with_a_typed_error() -> None:
    with pytest.raises(ConfigurationError) as info:
        SqlSessionStore("postgresql+asyncpg://u@127.0.0.1/db")
    assert info.value.code == "LA-CONFIG" and "psycopg" in info.value.message
    assert "postgresql+psycopg://" in info.value.hint


def test_a_missing_driver_names_the_extra(tmp_path: Path) -> None:
    # ``sys.modules[name] = None`` makes ``import name`` fail as if it were not installed.
    code = """
        import sys
        sys.modules["psycopg"] = None
        from lightagent import LightAgentError, SqlSessionStore
        try:
            SqlSessionStore("postgresql+psycopg://u@127.0.0.1/db")
        except LightAgentError as error:
            print(error.code, error.hint)
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "LA-MISSING-EXTRA pip install 'lightagent-core[postgres]'"


def test_the_owner_field_reads_jsonb_and_skips_a_nul() -> None:
    db = PostgresDatabase("postgresql://u@127.0.0.1:1/db", 1)
    text = db.json_text("e.payload", "data", "owner", "user_id")
    assert "e.payload::jsonb #>> '{data,owner,user_id}'" in text and "strpos" in text
    assert db.guarded_appends


def test_errors_are_lightagent_errors() -> None:
    with pytest.raises(LightAgentError):
        PostgresSessionStore("postgresql+psycopg://u@127.0.0.1/db", engine_options={"echo": 1})
