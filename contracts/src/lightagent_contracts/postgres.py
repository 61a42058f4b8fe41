"""PostgreSQL for tests: a fresh database per test session on the local server.

Tests that need PostgreSQL take the ``postgres_url`` fixture. Where no server answers
at ``LIGHTAGENT_TEST_POSTGRES`` (default ``postgresql://postgres@127.0.0.1:5432/test``)
they are skipped with the reason, unless ``LIGHTAGENT_REQUIRE_POSTGRES=1``, where they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

__all__ = ["postgres_admin_url", "postgres_url", "require_postgres"]

DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/test"


def postgres_admin_url() -> str:
    """The URL of the server's maintenance database used to create test databases."""
    return os.environ.get("LIGHTAGENT_TEST_POSTGRES", DEFAULT_ADMIN_URL)


def require_postgres() -> bool:
    """Whether a missing PostgreSQL must fail the run instead of skipping."""
    return os.environ.get("LIGHTAGENT_REQUIRE_POSTGRES", "") not in ("", "0", "false")


def _unavailable(reason: str) -> None:
    if require_postgres():
        pytest.fail(f"PostgreSQL is required (LIGHTAGENT_REQUIRE_POSTGRES=1) but {reason}")
    pytest.skip(f"no PostgreSQL: {reason}")


@pytest.fixture(scope="session")
def _postgres_database() -> Iterator[str]:
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'lightagent-core[postgres]')")
    admin = postgres_admin_url()
    name = f"la_test_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as exc:
        _unavailable(f"{admin} did not answer ({type(exc).__name__}: {str(exc).strip()[:120]})")
    base = admin.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except Exception:
        pass  # a leftover test database is harmless; never fail teardown on it


@pytest.fixture
def postgres_url(_postgres_database: str) -> str:
    """A SQLAlchemy URL (``postgresql+psycopg://``) of a fresh database for this test session.

    Tests share the database within a session; give tables or rows a unique prefix
    (``uuid``) where tests could see each other's data.
    """
    return _postgres_database.replace("postgresql://", "postgresql+psycopg://", 1)
