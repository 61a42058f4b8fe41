"""The PostgreSQL session store passes the core's ``SessionStore`` contract suite."""

from __future__ import annotations

import uuid

import pytest
from lightagent.events.sql_store import SqlSessionStore
from lightagent_contracts.suites.session_store import SessionStoreContract
from lightagent_postgres import PostgresSessionStore


@pytest.mark.postgres
class TestPostgresStoreContract(SessionStoreContract):
    model_examples = 8  # each example opens a pool on the server
    model_steps = 10

    @pytest.fixture
    def make_store(self, postgres_url):
        prefix = f"t{uuid.uuid4().hex[:8]}_"
        return lambda: PostgresSessionStore(postgres_url, table_prefix=prefix)


@pytest.mark.postgres
class TestSqlSessionStoreOnPostgresContract(SessionStoreContract):
    """The core's class on a PostgreSQL URL: the dialect arrives through the plugin."""

    model_examples = 4
    model_steps = 8

    @pytest.fixture
    def make_store(self, postgres_url):
        prefix = f"u{uuid.uuid4().hex[:8]}_"
        return lambda: SqlSessionStore(postgres_url, table_prefix=prefix)
