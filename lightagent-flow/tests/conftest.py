"""Fixtures of the lightagent-flow tests: stores on real files and databases, step agents."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from lightagent_flow import JsonLightFlowStore, SqlLightFlowStore


@pytest.fixture(
    params=["json", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def flow_store(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    """Each durable store: a JSON folder, a SQLite file, and PostgreSQL (``postgres_url``)."""
    if request.param == "json":
        yield JsonLightFlowStore(tmp_path / "runs")
    elif request.param == "sqlite":
        store = SqlLightFlowStore(f"sqlite:///{tmp_path / 'runs.db'}")
        yield store
        store.close()
    else:
        store = SqlLightFlowStore(request.getfixturevalue("postgres_url"))
        yield store
        store.close()


@pytest.fixture
def run_id() -> str:
    """A fresh run id (PostgreSQL tests share one database per session)."""
    return f"run-{uuid.uuid4().hex[:12]}"


class Recorder:
    """Step agents that record their calls (per test, never shared)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail: dict[str, int] = {}

    def agent(self, name: str, output: str | None = None) -> Any:
        """A sync callable agent answering ``output`` (default ``"<name>-out"``), failing while ``fail[name] > 0``."""

        def run(query: str) -> str:
            self.calls.append((name, query))
            if self.fail.get(name, 0) > 0:
                self.fail[name] -= 1
                raise RuntimeError(f"{name} boom")
            return output if output is not None else f"{name}-out"

        run.__name__ = f"agent_{name}"
        return run

    def count(self, name: str) -> int:
        """How many times step ``name``'s agent ran."""
        return sum(1 for n, _ in self.calls if n == name)


@pytest.fixture
def recorder() -> Recorder:
    """A fresh :class:`Recorder`."""
    return Recorder()


@pytest.fixture(params=["local", "dbos"])
def flow_executor(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    """What ``LightFlow(executor=)`` gets: None (in this process) and, when lightagent-dbos
    is installed, a ``DBOSFlowExecutor`` on a launched DBOS with a fresh SQLite system DB."""
    if request.param == "local":
        yield None
        return
    pytest.importorskip("dbos", reason="the dbos executor needs lightagent-dbos installed")
    dbos_mod = pytest.importorskip("lightagent_dbos")
    from dbos import DBOS

    DBOS(
        config={
            "name": "lightflow-test",
            "system_database_url": f"sqlite:///{tmp_path / 'dbos.sqlite'}",
        }
    )
    executor = dbos_mod.DBOSFlowExecutor(name=f"flow_{uuid.uuid4().hex[:10]}")
    DBOS.launch()
    try:
        yield executor
    finally:
        DBOS.destroy()
