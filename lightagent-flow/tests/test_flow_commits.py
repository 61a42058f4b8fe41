"""What a run writes: one commit per step plus one to start, on a SQL store, and the record
stays right when the start or the final header rides on another write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lightagent.errors import StorageError, ValidationError
from lightagent_flow import LightFlow, SqlLightFlowStore


class Counting(SqlLightFlowStore):
    """A SQL store that records which of its store methods a run called."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.calls: list[str] = []
        for name in (
            "save_header",
            "start_run",
            "create_run",
            "claim_run",
            "commit_step",
            "finish_run",
            "cancel_requested",
            "load_run",
        ):
            setattr(self, name, self._counted(name, getattr(self, name)))

    def _counted(self, name: str, method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return method(*args, **kwargs)

        return call


def _url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'runs.db'}"


KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def _chain(store: Any, n: int = 3) -> LightFlow:
    flow = LightFlow(store=store)
    for i in range(n):
        flow.step(f"s{i}", agent=lambda q, i=i: f"out{i}", depends_on=[f"s{i - 1}"] if i else None)
    return flow


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_run_costs_one_store_call_per_step_and_one_to_start(
    kind: str, tmp_path: Path, run_id: str, request: pytest.FixtureRequest
) -> None:
    store = Counting(_url(kind, tmp_path, request))
    flow = _chain(store)
    flow.run("warm", run_id=f"warm-{run_id}")  # the first write creates the tables
    store.calls.clear()
    result = flow.run("q", run_id=run_id)
    assert result.success and result.content == "out2"
    # No read of "is the run new?", no separate start or final header write.
    assert store.calls == [
        "create_run",
        "commit_step",
        "commit_step",
        "finish_run",
    ]
    record = store.load_run(run_id)
    assert record is not None and record["status"] == "success" and record["content"] == "out2"
    assert record["error"] is None and [s["status"] for s in record["steps"]] == ["success"] * 3
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_stored_run_id_is_replayed_without_writing(
    kind: str, tmp_path: Path, run_id: str, request: pytest.FixtureRequest
) -> None:
    store = Counting(_url(kind, tmp_path, request))
    flow = _chain(store, 2)
    first = flow.run("q", run_id=run_id)
    before = store.load_run(run_id)
    store.calls.clear()
    again = flow.run("q", run_id=run_id)
    assert again.idempotent_replay and again.content == first.content == "out1"
    assert "commit_step" not in store.calls and "save_header" not in store.calls
    assert store.load_run(run_id) == before  # create_run wrote nothing
    with pytest.raises(ValidationError) as info:
        flow.run("another query", run_id=run_id)
    assert info.value.code == "LA-FLOW-RUN-EXISTS"
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_cancel_read_with_the_last_commit_is_the_stored_outcome(
    kind: str, tmp_path: Path, run_id: str, request: pytest.FixtureRequest
) -> None:
    """The last step's commit stores the run's outcome; a cancel request it reads back
    changes the outcome, and the header is written again so the store agrees."""
    store = SqlLightFlowStore(_url(kind, tmp_path, request))

    def last(query: str) -> str:
        store.request_cancel(run_id, "from elsewhere")  # as another process would
        return "done"

    flow = (
        LightFlow(store=store).step("a", agent=lambda q: "x").step("b", agent=last, depends_on="a")
    )
    result = flow.run("q", run_id=run_id)
    assert result.status == "cancelled"
    record = store.load_run(run_id)
    assert record is not None and record["status"] == "cancelled"
    assert record["error_code"] == "LA-CANCELLED"
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_create_run_and_finish_run_keep_the_fence(
    kind: str, tmp_path: Path, run_id: str, request: pytest.FixtureRequest
) -> None:
    store = SqlLightFlowStore(_url(kind, tmp_path, request))
    # On a store with no tables yet (the transactional path), then once they exist.
    for rid in (run_id, f"{run_id}-2"):
        assert store.create_run(rid, {"run_id": rid, "status": "running", "query": "q"}) == (
            1,
            False,
        )
        assert store.create_run(rid, {"run_id": rid, "status": "other", "query": "no"}) is None
        record = store.load_run(rid)
        assert record is not None and record["status"] == "running" and record["query"] == "q"
    assert store.claim_run(run_id) == 2
    with pytest.raises(StorageError) as info:
        store.finish_run(
            run_id,
            {"name": "a", "status": "success"},
            {"run_id": run_id, "status": "success"},
            epoch=1,
        )
    assert info.value.code == "LA-STORAGE-CONFLICT"
    record = store.load_run(run_id)
    assert record is not None and record["status"] == "running" and record["steps"] == []
    assert not store.finish_run(
        run_id, {"name": "a", "status": "success"}, {"run_id": run_id, "status": "success"}, epoch=2
    )
    record = store.load_run(run_id)
    assert record is not None and record["status"] == "success"
    assert [s["name"] for s in record["steps"]] == ["a"]
    store.close()
