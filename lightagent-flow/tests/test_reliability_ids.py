"""Reliability: a run id with a trailing line break is refused (``re.match`` with ``$``
accepted ``"run-1\\n"``, which names another folder or row than ``"run-1"``)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from lightagent.errors import ValidationError
from lightagent_flow import LightFlow


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_run_ids_with_a_line_break_are_refused(flow_store: Any, recorder: Any, ending: str) -> None:
    base = f"lb-{uuid.uuid4().hex[:10]}"
    flow = LightFlow(store=flow_store).step("a", agent=recorder.agent("a"))
    with pytest.raises(ValidationError) as info:
        flow.run("q", run_id=base + ending)
    assert info.value.code == "LA-FLOW-RUN-ID"
    assert recorder.count("a") == 0
    assert not [r for r in flow.list_runs() if r["run_id"].startswith(base)]
