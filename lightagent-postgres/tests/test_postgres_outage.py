"""Reliability: the PostgreSQL session store through a database outage.

The store reaches PostgreSQL through a small TCP proxy on 127.0.0.1 that the test
controls (toxiproxy is not packaged here). "Down" closes every open connection and
refuses new ones, as a server restart does; "up" accepts them again. While the database
is down every call gives a typed ``StorageError``; once it is back the same store object
goes on, with every acknowledged event kept once and in order.
"""

from __future__ import annotations

import uuid

import pytest
from lightagent.errors import StorageError
from lightagent.events.sql_store import SqlSessionStore

pytestmark = [pytest.mark.postgres]


@pytest.fixture
def proxy(postgres_outage):
    return postgres_outage


def test_session_store_gives_typed_errors_while_down_and_goes_on_after(postgres_url, proxy):
    store = SqlSessionStore(proxy.route(postgres_url), table_prefix=f"o{uuid.uuid4().hex[:8]}_")
    try:
        acked = [e.sequence for e in store.append("s", [{"type": "n.e", "data": {"i": 0}}])]
        acked += [e.sequence for e in store.append("s", [{"type": "n.e", "data": {"i": 1}}])]
        proxy.down()
        calls = {
            "append": lambda: store.append("s", [{"type": "n.e", "data": {"i": -1}}]),
            "events": lambda: store.events("s"),
            "last_sequence": lambda: store.last_sequence("s"),
            "list_sessions": lambda: store.list_sessions(),
        }
        for name, call in calls.items():
            with pytest.raises(StorageError) as info:
                call()
            assert info.value.code == "LA-STORAGE-UNAVAILABLE", (name, info.value)
            assert info.value.hint, name
        proxy.up()
        acked += [e.sequence for e in store.append("s", [{"type": "n.e", "data": {"i": 2}}])]
        events = store.events("s")
        assert [e.sequence for e in events] == [1, 2, 3] == acked
        assert [e.data["i"] for e in events] == [0, 1, 2]
    finally:
        store.close()
