"""``SharedMemoryPool`` passes the memory contract in memory, on SQLite and on PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
from lightagent import SharedMemoryPool
from lightagent_contracts.suites.memory import MemoryContract


class TestInMemoryPool(MemoryContract):
    @pytest.fixture
    def make_memory(self):
        return SharedMemoryPool


class TestSqlitePool(MemoryContract):
    @pytest.fixture
    def make_memory(self, tmp_path):
        pools = []

        def make():
            pool = SharedMemoryPool(f"sqlite:///{tmp_path / uuid.uuid4().hex}.db")
            pools.append(pool)
            return pool

        yield make
        for pool in pools:
            pool.close()


@pytest.mark.postgres
class TestPostgresPool(MemoryContract):
    @pytest.fixture
    def make_memory(self, postgres_url):
        pools = []

        def make():
            # a table of its own per pool: the database is shared by the test session
            pool = SharedMemoryPool(postgres_url, table=f"mem_{uuid.uuid4().hex[:12]}")
            pools.append(pool)
            return pool

        yield make
        for pool in pools:
            pool.close()
