"""What each SQL store needs installed: the session stores run on the drivers alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


def _run(code: str, cwd: Path) -> list[str]:
    # The core alone: lightagent-postgres (installed in the workspace) is switched off.
    env = {**os.environ, "LIGHTAGENT_DISABLE_PLUGINS": "lightagent-postgres"}
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, cwd=cwd, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")


def test_sessions_need_no_sqlalchemy_and_postgres_names_its_extra(tmp_path: Path) -> None:
    # ``sys.modules[name] = None`` makes ``import name`` fail as if it were not installed.
    lines = _run(
        """
        import sys
        sys.modules["sqlalchemy"] = None
        sys.modules["psycopg"] = None
        from lightagent import LightAgent, LightAgentError, ScriptedModel
        from lightagent import SqliteSessionStore, SqlSessionStore
        from lightagent.sql_conn import open_database

        store = SqliteSessionStore("s.db")
        store.append("s", [{"type": "n.e"}], expected_sequence=0)
        print(store.last_sequence("s"), len(store.events("s")))
        url = "postgresql+psycopg://u@127.0.0.1/db"
        builds = (
            lambda: SqlSessionStore(url),
            lambda: LightAgent(model=ScriptedModel(["x"]), session_store=url).run("q", session_id="s"),
            lambda: open_database(url, needed_by="SqlLightFlowStore"),
        )
        for build in builds:
            try:
                build()
            except LightAgentError as error:
                print(error.code, error.details["install"], "|", error.hint)
                print(error.message)
        """,
        tmp_path,
    )
    assert lines[0] == "1 1"
    # SqlReviewStore and SqlTokenLedger (the `sql` extra): lightagent-review's tests.
    install = "pip install 'lightagent-core[postgres]'"
    for line in lines[1:7:2]:
        code, rest = line.split(" ", 1)
        assert code == "LA-MISSING-EXTRA" and rest.startswith(f"{install} | {install}"), line
        assert "lightagent-postgres" in rest
    # each names what needed PostgreSQL
    assert lines[2].startswith("SqlSessionStore on postgresql+psycopg://")
    assert lines[4].startswith("a session store for postgresql+psycopg:// URLs")
    assert lines[6].startswith("SqlLightFlowStore on postgresql+psycopg://")


def test_an_unsupported_database_url_is_typed(tmp_path: Path) -> None:
    import pytest
    from lightagent import ConfigurationError, SqlSessionStore

    with pytest.raises(ConfigurationError) as info:
        SqlSessionStore("mysql://u@127.0.0.1/db")
    assert info.value.code == "LA-CONFIG" and "mysql://" in info.value.message
    assert "postgresql" in info.value.hint
    with pytest.raises(ConfigurationError) as info:
        SqlSessionStore(f"sqlite:///{tmp_path / 's.db'}", engine_options={"echo": True})
    assert info.value.code == "LA-CONFIG"
