"""Fixtures: a launched DBOS on a fresh SQLite system database, the loopback model server,
and a fresh PostgreSQL database per test when one is reachable."""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lightagent_contracts.fixtures import loopback_server

__all__ = ["dbos_launch", "loopback_server", "postgres_url", "unique_name"]

_counter = itertools.count()


def unique_name(prefix: str = "agent") -> str:
    """A DBOSAgent name not used before in this process (a name is registered once)."""
    return f"{prefix}{next(_counter)}_{uuid.uuid4().hex[:6]}"


@pytest.fixture
def dbos_launch(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """``launch(url=None)``: configure and launch DBOS (SQLite file under tmp_path by
    default); the instance is destroyed after the test. Returns the system database URL."""
    from dbos import DBOS

    def launch(url: str | None = None) -> str:
        url = url or f"sqlite:///{tmp_path / 'dbos.sqlite'}"
        DBOS(config={"name": "lightagent-dbos-test", "system_database_url": url})
        DBOS.launch()
        return url

    yield launch
    DBOS.destroy()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database on 127.0.0.1:5432 (dropped after the test)."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency of dbos
        pytest.skip("psycopg is not installed")
    admin = "postgresql://postgres@127.0.0.1:5432/test"
    try:
        conn = psycopg.connect(admin, autocommit=True, connect_timeout=3)
    except Exception as exc:
        if os.environ.get("LIGHTAGENT_REQUIRE_POSTGRES", "0").lower() not in ("", "0", "false"):
            raise
        pytest.skip(f"PostgreSQL at 127.0.0.1:5432 (user postgres, db test) is absent: {exc}")
    name = f"la_dbos_{uuid.uuid4().hex[:12]}"
    with conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
