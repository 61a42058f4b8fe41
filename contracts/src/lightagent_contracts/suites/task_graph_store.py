"""The LightDAG task-graph store contract suite.

Subclass :class:`TaskGraphStoreContract` and provide:

* ``make_store``: a zero-argument factory; two calls give two instances over the *same*
  storage (same file or database), so durability across instances is checked;
* ``create_run_kwargs``: ``fn(run_id, variant=0) -> dict`` of keyword arguments for
  ``store.create_run(**kwargs)``; a different ``variant`` must give different tasks.

::

    class TestSqliteStore(TaskGraphStoreContract):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: SqliteTaskGraphStore(tmp_path / "dag.db")

        @pytest.fixture
        def create_run_kwargs(self):
            def kwargs(run_id, variant=0):
                return dict(run_id=run_id, tasks=[...], ...)
            return kwargs
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from lightagent.errors import LightAgentError

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["TaskGraphStoreContract"]

RunKwargs = Callable[..., dict[str, Any]]


def _rid() -> str:
    return f"contract-run-{uuid.uuid4().hex[:10]}"


def _close(store: Any) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()


class TaskGraphStoreContract(ContractSuite):
    """Behaviour every task-graph store shows. Provide ``make_store`` and ``create_run_kwargs``."""

    _contract_suite = True
    __test__ = False

    @pytest.fixture
    def store(self, make_store: Callable[[], Any]) -> Any:
        store = make_store()
        yield store
        _close(store)

    def test_created_run_can_be_read_back(self, store: Any, create_run_kwargs: RunKwargs) -> None:
        run_id = _rid()
        store.create_run(**create_run_kwargs(run_id))
        run = store.get_run(run_id)
        assert run is not None and run.run_id == run_id

    def test_unknown_run_is_none(self, store: Any) -> None:
        assert store.get_run("no-such-run") is None

    def test_create_is_idempotent_for_the_same_content(
        self, store: Any, create_run_kwargs: RunKwargs
    ) -> None:
        run_id = _rid()
        store.create_run(**create_run_kwargs(run_id))
        tasks = [t.task_id for t in store.list_tasks(run_id)]
        store.create_run(**create_run_kwargs(run_id))
        assert [t.task_id for t in store.list_tasks(run_id)] == tasks

    def test_create_with_different_content_conflicts(
        self, store: Any, create_run_kwargs: RunKwargs
    ) -> None:
        run_id = _rid()
        store.create_run(**create_run_kwargs(run_id))
        with pytest.raises(LightAgentError):
            store.create_run(**create_run_kwargs(run_id, variant=1))

    def test_tasks_are_listed_and_fetchable(self, store: Any, create_run_kwargs: RunKwargs) -> None:
        run_id = _rid()
        store.create_run(**create_run_kwargs(run_id))
        tasks = store.list_tasks(run_id)
        assert tasks, "a created run has tasks"
        for task in tasks:
            fetched = store.get_task(run_id, task.task_id)
            assert fetched is not None and fetched.task_id == task.task_id

    def test_events_are_ordered_and_paged(self, store: Any, create_run_kwargs: RunKwargs) -> None:
        run_id = _rid()
        store.create_run(**create_run_kwargs(run_id))
        events = store.events(run_id)
        assert events, "creating a run records an event"
        ids = [e.event_id for e in events]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        assert all(e.run_id == run_id for e in events)
        assert [e.event_id for e in store.events(run_id, after=ids[0])] == ids[1:]
        assert len(store.events(run_id, limit=1)) == 1

    def test_a_second_instance_sees_the_run(
        self, store: Any, make_store: Callable[[], Any], create_run_kwargs: RunKwargs
    ) -> None:
        run_id = _rid()
        store.create_run(**create_run_kwargs(run_id))
        other = make_store()
        try:
            assert other.get_run(run_id) is not None
            assert len(other.list_tasks(run_id)) == len(store.list_tasks(run_id))
        finally:
            if other is not store:
                _close(other)
