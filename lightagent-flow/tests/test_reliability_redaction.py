"""Reliability: a key in a step's error is never stored or shown in clear.

A step agent fails with whatever its libraries raise, and an exception message often
carries the credential that was refused. The step's error is committed to the flow
store (JSON files, SQLite, PostgreSQL) and returned in the result: both are redacted.
(The step's own output and query are its data, stored as they are, so that a resume
hands dependants exactly what the step produced.)
"""

from __future__ import annotations

from typing import Any

import pytest
from lightagent.errors import StorageError
from lightagent_flow import JsonLightFlowStore, LightFlow

SECRET = "sk-proj-PLANTEDsecret0123456789abcdefXYZ"


def _plain(query: str) -> str:
    raise ValueError(f"upstream refused token {SECRET}")


def _typed(query: str) -> str:
    raise StorageError("LA-STORAGE", f"login failed with password={SECRET}")


@pytest.mark.parametrize("agent", [_plain, _typed])
def test_a_failed_step_is_stored_with_its_error_redacted(
    flow_store: Any, run_id: str, tmp_path: Any, agent: Any
) -> None:
    flow = LightFlow(store=flow_store, retry_backoff=0).step("call", agent=agent, max_retry=1)
    result = flow.run("q", run_id=run_id)
    assert not result.success
    step = result.steps["call"]
    assert step.error and "[redacted]" in step.error, step.error
    assert SECRET not in repr(result.to_dict())
    assert SECRET not in repr(flow_store.load_run(run_id))
    assert SECRET not in repr(flow.get_run(run_id))
    if isinstance(flow_store, JsonLightFlowStore):
        for path in tmp_path.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path
