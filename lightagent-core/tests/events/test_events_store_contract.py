"""Every first-party session store passes the contract suite."""

from __future__ import annotations

import pytest
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.memory_store import InMemorySessionStore
from lightagent.events.sql_store import SqliteSessionStore
from lightagent_contracts.suites.session_store import SessionStoreContract


class TestInMemoryStoreContract(SessionStoreContract):
    @pytest.fixture
    def make_store(self):
        shared = InMemorySessionStore()
        return lambda: shared


class TestJsonlStoreContract(SessionStoreContract):
    @pytest.fixture
    def make_store(self, tmp_path):
        return lambda: JsonlSessionStore(tmp_path / "sessions")


class TestSqliteStoreContract(SessionStoreContract):
    @pytest.fixture
    def make_store(self, tmp_path):
        return lambda: SqliteSessionStore(tmp_path / "sessions.db")
