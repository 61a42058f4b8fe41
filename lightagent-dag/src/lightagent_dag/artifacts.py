"""Artifact stores: the protocol, the checks every store makes, and LocalArtifactStore (a folder).

Blobs are content-addressed and immutable: a blob's name is its tenant, project and
sha256, every read rechecks size and hash, and a manifest names its blob by that path.
:class:`~lightagent_dag.sql.blobs.SqlArtifactStore` keeps the same blobs in the task-graph
store's own database instead of a folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lightagent.errors import PolicyError

from lightagent_dag.errors import DAGError
from lightagent_dag.records import ArtifactManifest

__all__ = [
    "ArtifactStore",
    "LocalArtifactStore",
    "blob_name",
    "check_content",
    "check_readable",
    "new_manifest",
]

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


def blob_name(tenant_id: str, project_id: str, content_hash: str) -> str:
    """A blob's name in its store, ``<tenant>/<project>/<sha[:2]>/<sha256>``, each part checked."""
    if not isinstance(content_hash, str) or not _HASH.fullmatch(content_hash):
        raise DAGError("LA-DAG-ARTIFACT-PATH", f"not a sha256 hex digest: {content_hash!r}")
    tenant = _scope(tenant_id, "tenant_id")
    project = _scope(project_id, "project_id")
    return f"{tenant}/{project}/{content_hash[:2]}/{content_hash}"


def new_manifest(
    content: bytes,
    *,
    limit: int,
    run_id: str,
    task_id: str,
    attempt_id: str,
    tenant_id: str,
    project_id: str,
    media_type: str = "text/plain",
    contract_hash: str = "",
    dependency_manifest: Mapping[str, str] | None = None,
) -> tuple[bytes, ArtifactManifest]:
    """Check ``content`` and describe it: its bytes and a staged manifest (nothing is written)."""
    if not isinstance(content, bytes | bytearray):
        raise DAGError(
            "LA-DAG-INVALID", f"artifact content must be bytes, got {type(content).__name__}"
        )
    content = bytes(content)
    if len(content) > limit:
        raise DAGError(
            "LA-DAG-ARTIFACT-TOO-LARGE",
            f"artifact of {len(content)} bytes exceeds max_artifact_bytes={limit}",
            details={"limit": "max_artifact_bytes", "value": len(content), "maximum": limit},
        )
    digest = hashlib.sha256(content).hexdigest()
    return content, ArtifactManifest(
        run_id=run_id,
        task_id=task_id,
        attempt_id=attempt_id,
        tenant_id=tenant_id,
        project_id=project_id,
        content_hash=digest,
        relative_blob_path=blob_name(tenant_id, project_id, digest),
        media_type=media_type,
        byte_size=len(content),
        contract_hash=contract_hash,
        dependency_manifest=dict(dependency_manifest or {}),
    )


def check_readable(manifest: ArtifactManifest, context: Any, require_published: bool) -> str:
    """Refuse another tenant's or project's artifact and an unpublished one; returns its blob name."""
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
    name = blob_name(manifest.tenant_id, manifest.project_id, manifest.content_hash)
    if name != manifest.relative_blob_path:
        raise DAGError(
            "LA-DAG-ARTIFACT-PATH",
            f"manifest path {manifest.relative_blob_path!r} is not its hash path",
        )
    return name


def check_content(manifest: ArtifactManifest, data: bytes | None, name: str) -> bytes:
    """``data`` if it is there and matches the manifest's size and sha256."""
    if data is None:
        raise DAGError("LA-DAG-ARTIFACT-INTEGRITY", f"artifact blob {name} is missing")
    if len(data) != manifest.byte_size or hashlib.sha256(data).hexdigest() != manifest.content_hash:
        raise DAGError(
            "LA-DAG-ARTIFACT-INTEGRITY",
            f"artifact blob {name} does not match its manifest (size or sha256)",
            details={"artifact_id": manifest.artifact_id, "expected": manifest.content_hash},
        )
    return data


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
        self._root = str(self.root)

    def _resolve(self, relative: str) -> str:
        """The blob's path, refusing ``..`` and any symlink below the root (checked now)."""
        parts = relative.split("/")
        if any(p in ("", ".", "..") for p in parts) or relative.startswith("/"):
            raise DAGError("LA-DAG-ARTIFACT-PATH", f"unsafe artifact path: {relative!r}")
        current = self._root
        for part in parts:
            current = f"{current}/{part}"
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                break  # nothing below a missing part can be a symlink yet
            if stat.S_ISLNK(mode):
                raise DAGError(
                    "LA-DAG-ARTIFACT-PATH", f"artifact path contains a symlink: {current}"
                )
        return f"{self._root}/{relative}"

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
        limit = min(x for x in (max_bytes, self.max_bytes, 1 << 62) if x is not None)
        content, manifest = new_manifest(
            content,
            limit=limit,
            run_id=run_id,
            task_id=task_id,
            attempt_id=attempt_id,
            tenant_id=tenant_id,
            project_id=project_id,
            media_type=media_type,
            contract_hash=contract_hash,
            dependency_manifest=dependency_manifest,
        )
        path = self._resolve(manifest.relative_blob_path)
        data = self._read_bytes(path)
        if data is None or len(data) != len(content) or data != content:
            self._write_atomically(manifest.relative_blob_path, content)
        return manifest

    def _write_atomically(self, relative: str, content: bytes) -> None:
        folder = os.path.dirname(f"{self._root}/{relative}")
        os.makedirs(folder, exist_ok=True)
        path = self._resolve(relative)  # a symlink may have appeared
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
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
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # make the rename itself durable
        finally:
            os.close(dir_fd)

    def _read_bytes(self, path: str) -> bytes | None:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise DAGError("LA-DAG-ARTIFACT-PATH", f"cannot open artifact {path}: {exc}") from exc
        with os.fdopen(fd, "rb") as handle:
            return handle.read()

    def read(
        self, manifest: ArtifactManifest, context: Any = None, *, require_published: bool = True
    ) -> bytes:
        """The artifact's bytes, after checking scope, state, size and sha256."""
        name = check_readable(manifest, context, require_published)
        return check_content(manifest, self._read_bytes(self._resolve(name)), name)

    def check_integrity(self, manifest: ArtifactManifest) -> bool:
        """Whether the blob is present and matches the manifest's size and sha256."""
        try:
            self.read(replace(manifest, state="published"))
        except DAGError:
            return False
        return True
