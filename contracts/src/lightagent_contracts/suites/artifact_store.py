"""The LightDAG artifact store contract suite (``stage``, ``read``, ``check_integrity``).

Subclass :class:`ArtifactStoreContract` and provide ``make_artifact_store``, a
zero-argument factory returning an empty store::

    class TestLocalArtifacts(ArtifactStoreContract):
        @pytest.fixture
        def make_artifact_store(self, tmp_path):
            return lambda: LocalArtifactStore(tmp_path / "artifacts")
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest
from lightagent.errors import LightAgentError

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["ArtifactStoreContract"]


class ArtifactStoreContract(ContractSuite):
    """Behaviour every artifact store shows. Provide ``make_artifact_store() -> store``."""

    _contract_suite = True
    __test__ = False

    #: The identity ``stage`` is called with.
    scope: dict[str, str] = {
        "run_id": "run-1",
        "task_id": "task-1",
        "attempt_id": "attempt-1",
        "tenant_id": "acme",
        "project_id": "demo",
    }

    @pytest.fixture
    def artifacts(self, make_artifact_store: Callable[[], Any]) -> Any:
        return make_artifact_store()

    def test_stage_is_content_addressed(self, artifacts: Any) -> None:
        content = "résumé ✓\n".encode()
        manifest = artifacts.stage(content, **self.scope)
        assert manifest.content_hash == hashlib.sha256(content).hexdigest()
        assert manifest.byte_size == len(content)
        again = artifacts.stage(content, **{**self.scope, "attempt_id": "attempt-2"})
        assert again.content_hash == manifest.content_hash

    def test_staged_bytes_read_back_exactly(self, artifacts: Any) -> None:
        for content in (b"", b"\x00\xff" * 1000, b"plain text"):
            manifest = artifacts.stage(content, **self.scope)
            assert artifacts.read(manifest, require_published=False) == content

    def test_integrity_holds_after_stage(self, artifacts: Any) -> None:
        manifest = artifacts.stage(b"intact", **self.scope)
        assert artifacts.check_integrity(manifest) is True

    def test_staged_artifact_is_not_read_as_published(self, artifacts: Any) -> None:
        manifest = artifacts.stage(b"not yet verified", **self.scope)
        with pytest.raises(LightAgentError):
            artifacts.read(manifest, require_published=True)

    def test_non_bytes_content_is_a_typed_error(self, artifacts: Any) -> None:
        with pytest.raises(LightAgentError):
            artifacts.stage("a str, not bytes", **self.scope)
