"""Two users start the same new session at the same moment: one owns it, the other is refused.

Each user has an agent of its own, a store object of its own on the same storage and a
real model endpoint of its own (the loopback server), as two processes would. Both runs
see the session empty; one conditional create wins. The loser must read the owner again
before appending anything: it never sees the owner's history, and the owner's history
never holds the loser's question.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from lightagent import LightAgent
from lightagent.events.jsonl_store import JsonlSessionStore
from lightagent.events.manager import SessionManager
from lightagent.events.sql_store import SqliteSessionStore
from lightagent_contracts.loopback import LoopbackServer

ROUNDS = 10


@pytest.fixture(params=["sqlite", "jsonl"])
def open_store(request, tmp_path) -> Callable[[], Any]:
    """Opens a new store object on one shared storage (call it once per user)."""
    if request.param == "sqlite":
        return lambda: SqliteSessionStore(tmp_path / "s.db")
    return lambda: JsonlSessionStore(tmp_path / "sessions")


def _agent(server: LoopbackServer, store: Any) -> LightAgent:
    return LightAgent(model="m", base_url=server.base_url, api_key="k", session_store=store)


def _race(
    agents: dict[str, LightAgent], session_id: str, questions: dict[str, str], mode: str
) -> dict:
    barrier = threading.Barrier(len(agents))
    results: dict[str, Any] = {}

    def go(user: str) -> None:
        options = {"session_id": session_id, "user_id": user, "result_format": "object"}
        barrier.wait()
        if mode == "run":
            results[user] = agents[user].run(questions[user], **options)
        else:  # the async driver records through the store's async methods
            results[user] = asyncio.run(agents[user].arun(questions[user], **options))

    threads = [threading.Thread(target=go, args=(user,)) for user in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.parametrize("mode", ["run", "arun"])
def test_the_loser_of_a_creation_race_is_refused_and_sees_nothing(open_store, mode) -> None:
    with (
        LoopbackServer(default="noted, alice") as alice_model,
        LoopbackServer(default="noted, bob") as bob_model,
    ):
        stores = {"alice": open_store(), "bob": open_store()}
        models = {"alice": alice_model, "bob": bob_model}
        agents = {user: _agent(models[user], stores[user]) for user in stores}
        try:
            for n in range(ROUNDS):
                sid = f"race-{n}"
                questions = {"alice": f"alice's PIN is {n}1234", "bob": f"bob asks {n} for a PIN"}
                for model in models.values():
                    model.clear()
                results = _race(agents, sid, questions, mode)
                events = SessionManager(stores["alice"]).events(sid)
                owner = events[0].data["owner"]["user_id"]
                intruder = "bob" if owner == "alice" else "alice"
                # The owner's run went through; the intruder's was refused before it
                # recorded anything or called its model.
                assert results[owner].error is None, results[owner].error
                assert results[intruder].error["code"] == "LA-SESSION-OWNER", (
                    n,
                    results[intruder].error,
                )
                assert models[intruder].requests == []
                log = repr([e.data for e in events])
                assert questions[intruder] not in log
                # The owner's next run sends only her own history.
                again = agents[owner].run(
                    "and now?", session_id=sid, user_id=owner, result_format="object"
                )
                assert again.error is None
                sent = repr(models[owner].requests[-1]["messages"])
                assert questions[owner] in sent and questions[intruder] not in sent
        finally:
            for store in stores.values():
                store.close()
