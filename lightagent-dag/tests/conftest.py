"""Fixtures for the lightagent-dag tests: a real store on SQLite (a file) or PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from lightagent import PermissionSet, SecurityContext
from lightagent_dag import (
    DAGConfig,
    LightDAG,
    LocalArtifactStore,
    SqliteTaskGraphStore,
    SqlTaskGraphStore,
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def dag_store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[SqlTaskGraphStore]:
    """A task-graph store on a SQLite file, then on PostgreSQL."""
    if request.param == "sqlite":
        store: SqlTaskGraphStore = SqliteTaskGraphStore(tmp_path / "dag.sqlite3")
    else:
        store = SqlTaskGraphStore(request.getfixturevalue("postgres_url"))
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def security() -> Callable[..., SecurityContext]:
    """Build a SecurityContext allowed to run DAG tasks."""

    def make(**overrides: Any) -> SecurityContext:
        values: dict[str, Any] = {
            "user_id": "alice",
            "tenant_id": "acme",
            "project_id": "p1",
            "permissions": PermissionSet(allowed=frozenset({"dag.task.execute"})),
        }
        values.update(overrides)
        return SecurityContext(**values)

    return make


@pytest.fixture
def make_dag(dag_store: SqlTaskGraphStore, tmp_path: Any) -> Callable[..., LightDAG]:
    """Build a LightDAG over the parametrised store, with a fast-polling config."""

    def make(**kwargs: Any) -> LightDAG:
        config = kwargs.pop("config", None) or DAGConfig(
            poll_interval=0.01, poll_interval_max=0.05, retry_backoff_seconds=0.01
        )
        return LightDAG(
            store=dag_store,
            artifact_store=LocalArtifactStore(tmp_path / "artifacts"),
            config=config,
            **kwargs,
        )

    return make


@pytest.fixture
def run_id() -> str:
    """A unique run id (PostgreSQL tests share one database)."""
    return f"run-{uuid.uuid4().hex[:10]}"
