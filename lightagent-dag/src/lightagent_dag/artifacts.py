"""LocalArtifactStore: content-addressed, immutable artifact blobs in a local folder."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import PolicyError

from lightagent_dag.errors import DAGError
from lightagent_dag.records import ArtifactManifest

__all__ = ["ArtifactStore", "LocalArtifactStore"]

_SCOPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
_HASH = re.compile(r"^[0-9a-f]{64}$")


@runtime_checkable
class ArtifactStore(Protocol):
    """Where candidate and published artifact bytes live."""

    def stage(
        self,
        content: bytes,
        *,
        run_id: str,
        task_id: str,
        attempt_id: str,
        tenant_id: str,
        project_id: str,
        media_type: str = "text/plain",
        contract_hash: str = "",
        dependency_manifest: Mapping[str, str] | None = None,
    ) -> ArtifactManifest: ...

    def read(
        self, manifest: ArtifactManifest, context: Any = None, *, require_published: bool = True
    ) -> bytes: ...

    def check_integrity(self, manifest: ArtifactManifest) -> bool: ...


def _scope(value: str, name: str) -> str:
    if not isinstance(value, str) or not _SCOPE.fullmatch(value) or ".." in value:
        raise DAGError("LA-DAG-ARTIFACT-PATH", f"unsafe artifact {name}: {value!r}")
    return value


class LocalArtifactStore:
    """Blobs under ``<root>/<tenant>/<project>/<sha[:2]>/<sha256>``.

    Writes go to a temporary file that is fsynced and then renamed into place, so a
    crash leaves either no blob or a whole one. A blob is never rewritten with other
    bytes (its name is its hash), every read rechecks size and sha256, and symlinks or
    ``..`` anywhere below the root are refused.
    """

    def __init__(self, root: str | os.PathLike[str], *, max_bytes: int | None = None) -> None:
        self.root = Path(root).absolute()
        self.max_bytes = max_bytes

    def _blob_path(self, tenant_id: str, project_id: str, content_hash: str) -> tuple[str, Path]:
        if not _HASH.fullmatch(content_hash):
            raise DAGError("LA-DAG-ARTIFACT-PATH", f"not a sha256 hex digest: {content_hash!r}")
        relative = "/".join(
            (
                _scope(tenant_id, "tenant_id"),
                _scope(project_id, "project_id"),
                content_hash[:2],
                content_hash,
            )
        )
        return relative, self._resolve(relative)

    def _resolve(self, relative: str) -> Path:
        parts = relative.split("/")
        if any(p in ("", ".", "..") for p in parts) or relative.startswith("/"):
            raise DAGError("LA-DAG-ARTIFACT-PATH", f"unsafe artifact path: {relative!r}")
        current = self.root
        for part in parts:
            current = current / part
            if current.is_symlink():
                raise DAGError(
                    "LA-DAG-ARTIFACT-PATH", f"artifact path contains a symlink: {current}"
                )
        return current

    def stage(
        self,
        content: bytes,
        *,
        run_id: str,
        task_id: str,
        attempt_id: str,
        tenant_id: str,
        project_id: str,
        media_type: str = "text/plain",
        contract_hash: str = "",
        dependency_manifest: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
    ) -> ArtifactManifest:
        """Write ``content`` (if its blob is not there yet) and return a staged manifest."""
        if not isinstance(content, bytes | bytearray):
            raise DAGError(
                "LA-DAG-INVALID", f"artifact content must be bytes, got {type(content).__name__}"
            )
        content = bytes(content)
        limit = min(x for x in (max_bytes, self.max_bytes, 1 << 62) if x is not None)
        if len(content) > limit:
            raise DAGError(
                "LA-DAG-ARTIFACT-TOO-LARGE",
                f"artifact of {len(content)} bytes exceeds max_artifact_bytes={limit}",
                details={"limit": "max_artifact_bytes", "value": len(content), "maximum": limit},
            )
        digest = hashlib.sha256(content).hexdigest()
        relative, path = self._blob_path(tenant_id, project_id, digest)
        if not self._intact(path, digest, len(content)):
            self._write_atomically(path, content)
        return ArtifactManifest(
            run_id=run_id,
            task_id=task_id,
            attempt_id=attempt_id,
            tenant_id=tenant_id,
            project_id=project_id,
            content_hash=digest,
            relative_blob_path=relative,
            media_type=media_type,
            byte_size=len(content),
            contract_hash=contract_hash,
            dependency_manifest=dict(dependency_manifest or {}),
        )

    def _write_atomically(self, path: Path, content: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._resolve(path.relative_to(self.root).as_posix())  # a symlink may have appeared
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # make the rename itself durable
        finally:
            os.close(dir_fd)

    def _read_bytes(self, path: Path) -> bytes | None:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise DAGError("LA-DAG-ARTIFACT-PATH", f"cannot open artifact {path}: {exc}") from exc
        with os.fdopen(fd, "rb") as handle:
            return handle.read()

    def _intact(self, path: Path, digest: str, size: int) -> bool:
        data = self._read_bytes(path)
        return data is not None and len(data) == size and hashlib.sha256(data).hexdigest() == digest

    def read(
        self, manifest: ArtifactManifest, context: Any = None, *, require_published: bool = True
    ) -> bytes:
        """The artifact's bytes, after checking scope, state, size and sha256."""
        if context is not None:
            tenant = getattr(context, "tenant_id", None)
            project = getattr(context, "project_id", None)
            if (tenant, project) != (manifest.tenant_id, manifest.project_id):
                raise PolicyError(
                    "LA-POLICY",
                    f"artifact {manifest.artifact_id} belongs to another tenant or project",
                )
        if require_published and manifest.state != "published":
            raise DAGError(
                "LA-DAG-STATE",
                f"artifact {manifest.artifact_id} is {manifest.state}, not published",
            )
        relative, path = self._blob_path(
            manifest.tenant_id, manifest.project_id, manifest.content_hash
        )
        if relative != manifest.relative_blob_path:
            raise DAGError(
                "LA-DAG-ARTIFACT-PATH",
                f"manifest path {manifest.relative_blob_path!r} is not its hash path",
            )
        data = self._read_bytes(path)
        if data is None:
            raise DAGError("LA-DAG-ARTIFACT-INTEGRITY", f"artifact blob {relative} is missing")
        if (
            len(data) != manifest.byte_size
            or hashlib.sha256(data).hexdigest() != manifest.content_hash
        ):
            raise DAGError(
                "LA-DAG-ARTIFACT-INTEGRITY",
                f"artifact blob {relative} does not match its manifest (size or sha256)",
                details={"artifact_id": manifest.artifact_id, "expected": manifest.content_hash},
            )
        return data

    def check_integrity(self, manifest: ArtifactManifest) -> bool:
        """Whether the blob is present and matches the manifest's size and sha256."""
        try:
            self.read(replace(manifest, state="published"))
        except DAGError:
            return False
        return True
