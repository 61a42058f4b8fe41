"""Reliability: artifact scopes are checked over their whole length
(``re.match`` with ``$`` accepted a trailing line break: ``"acme\\n"`` named a folder
of its own next to ``"acme"``)."""

from __future__ import annotations

import pytest
from lightagent_dag import DAGError, LocalArtifactStore


@pytest.mark.parametrize("field", ["tenant_id", "project_id"])
def test_scopes_with_a_line_break_are_refused(tmp_path, field):
    store = LocalArtifactStore(tmp_path)
    scope = {"tenant_id": "acme", "project_id": "p1", field: "acme\n"}
    with pytest.raises(DAGError) as info:
        store.stage(b"x", run_id="r", task_id="t", attempt_id="a", **scope)
    assert info.value.code == "LA-DAG-ARTIFACT-PATH"
    assert list(tmp_path.iterdir()) == []
