"""The executors the job tests run on: none (the lease, in this process) and DBOS.

``job_executor`` is what ``JobManager(executor=)`` gets: None, and — when lightagent-dbos
is installed — a fresh ``DBOSJobExecutor`` on a DBOS launched once per test module (on a
SQLite system database: a launch costs about a second). lightagent-dbos is imported
only here, and only for the ``dbos`` parameter: the runtime itself never imports it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def launched_dbos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """DBOS launched on a fresh SQLite system database, destroyed after the module."""
    from dbos import DBOS

    path = tmp_path_factory.mktemp("dbos") / "dbos.sqlite"
    DBOS(config={"name": "lightjob-test", "system_database_url": f"sqlite:///{path}"})
    DBOS.launch()
    try:
        yield
    finally:
        DBOS.destroy()


@pytest.fixture(params=["local", "dbos"])
def job_executor(request: pytest.FixtureRequest) -> Any:
    """None (jobs run here, under a lease) or a ``DBOSJobExecutor`` (jobs are workflows)."""
    if request.param == "local":
        return None
    reason = "the dbos executor needs lightagent-dbos (and DBOS) importable"
    pytest.importorskip("dbos", reason=reason, exc_type=ImportError)
    dbos_mod = pytest.importorskip("lightagent_dbos", reason=reason, exc_type=ImportError)
    request.getfixturevalue("launched_dbos")
    # registered after the launch: fine for runs in this process (recovery is not tested here)
    return dbos_mod.DBOSJobExecutor(name=f"jobs_{uuid.uuid4().hex[:10]}")
