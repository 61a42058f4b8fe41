"""Reading a flow store never creates it: a mistyped path is no runs, not a new store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lightagent.errors import StorageError, ValidationError
from lightagent_flow import JsonLightFlowStore, LightFlow, SqlLightFlowStore


def _stores(root: Path) -> dict[str, Any]:
    return {
        "json": lambda: JsonLightFlowStore(root / "a" / "runs"),
        "sqlite path": lambda: SqlLightFlowStore(str(root / "b" / "runs.db")),
        "sqlite url": lambda: SqlLightFlowStore(f"sqlite:///{root / 'c' / 'runs.db'}"),
    }


def _flow(store: Any) -> LightFlow:
    return LightFlow(store=store).step("only", agent=lambda query: f"did {query}")


@pytest.mark.parametrize("kind", ["json", "sqlite path", "sqlite url"])
def test_reads_of_a_missing_flow_store_create_nothing(tmp_path: Path, kind: str) -> None:
    store = _stores(tmp_path)[kind]()
    flow = _flow(store)
    assert flow.get_run("r1") is None and flow.list_runs() == []
    assert store.cancel_requested("r1") is False
    with pytest.raises(ValidationError) as info:
        flow.get_result("r1")
    assert info.value.code == "LA-FLOW-RUN-NOT-FOUND"
    assert list(tmp_path.rglob("*")) == []
    assert not store.exists()
    # The first write creates the store; a second store object reads it back.
    assert flow.run("x", run_id="r1").success
    assert _flow(_stores(tmp_path)[kind]()).get_result("r1").success
    if hasattr(store, "close"):
        store.close()


def test_a_file_in_the_way_of_a_json_flow_store_is_typed(tmp_path: Path) -> None:
    blocker = tmp_path / "runs"
    blocker.write_text("not a folder")
    with pytest.raises(StorageError) as info:
        JsonLightFlowStore(blocker)
    assert info.value.code == "LA-STORAGE" and "is a file" in info.value.message
