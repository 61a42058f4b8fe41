"""Verifiers and artifact stores other plugins register are resolved by name:
``LightDAG(verifiers=["name"], artifact_store=("name", {...}))``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from lightagent.hookspecs import hookimpl
from lightagent.plugins import PluginHost, reset_host
from lightagent_dag import DAGError, LightDAG, LocalArtifactStore, TaskOutcome, TaskSpec
from lightagent_dag import plugin as dag_plugin


def always(request: Any) -> bool:
    """A plain verifier function: every candidate passes."""
    return True


class Expecting:
    """A verifier class with configuration: passes candidates equal to ``expected``."""

    key = "expecting"
    version = "1"

    def __init__(self, expected: str = "a") -> None:
        self.expected = expected

    async def verify(self, request: Any) -> Any:
        from lightagent_dag.verifiers import CallableVerifier

        check = CallableVerifier(self.key, lambda r: True)
        return await check.verify(request)


@hookimpl
def register_verifiers(register: Any) -> None:
    register("always", always)
    register("expecting", Expecting)


@pytest.fixture
def host() -> Iterator[PluginHost]:
    user = SimpleNamespace(register_verifiers=register_verifiers, __name__="verifier_plugin")
    host = PluginHost(
        entry_points=False,
        plugins=[("lightagent-dag", dag_plugin), ("verifier-plugin", user)],
    )
    reset_host(host)
    yield host
    reset_host(None)


def test_verifiers_and_artifact_store_by_name(host: PluginHost, tmp_path: Path, security) -> None:
    dag = LightDAG(
        store=tmp_path / "dag.sqlite3",
        artifact_store=("local", {"root": tmp_path / "blobs"}),
        verifiers=["always", ("expecting", {"expected": "b"})],
    )
    assert isinstance(dag.artifact_store, LocalArtifactStore)
    assert dag.artifact_store.root == (tmp_path / "blobs").absolute()
    assert set(dag.verifiers) == {"always", "expecting"}
    assert dag.verifiers["expecting"].expected == "b"

    dag.register_worker("w", lambda ctx: TaskOutcome.candidate("done"))
    task = TaskSpec(
        task_id="t",
        goal="do t",
        acceptance_contract={"task": "t"},
        worker_key="w",
        verifier_key="always",
    )
    dag.create_run([task], run_id="registered", context=security())
    assert dag.run("registered").success
    assert dag.read_artifact("registered", "t") == b"done"


def test_a_name_nobody_registered_is_a_typed_error(host: PluginHost, tmp_path: Path) -> None:
    with pytest.raises(DAGError) as caught:
        LightDAG(store=tmp_path / "dag.sqlite3", verifiers=["missing"])
    assert caught.value.code == "LA-DAG-VERIFIER-UNAVAILABLE"
    assert "always" in caught.value.message
    with pytest.raises(DAGError) as caught:
        LightDAG(store=tmp_path / "dag.sqlite3", verifiers="always")
    assert caught.value.code == "LA-DAG-INVALID"


def test_a_plain_string_is_still_a_folder(host: PluginHost, tmp_path: Path) -> None:
    dag = LightDAG(store=tmp_path / "dag.sqlite3", artifact_store=str(tmp_path / "local"))
    assert dag.artifact_store.root == (tmp_path / "local").absolute()
