"""SqlArtifactStore: artifact bytes in the task-graph store's own database.

Worker hosts that share a PostgreSQL store need no shared folder: every host reads the
blobs its dependencies published from the database. And an attempt's blob is written by
the attempt's own fenced write (the staged candidate, or the publication of an inline
verified one), so an artifact costs no commit or fsync of its own and is exactly as
durable as the publication that names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lightagent_dag.artifacts import check_content, check_readable, new_manifest
from lightagent_dag.errors import DAGError
from lightagent_dag.records import ArtifactManifest
from lightagent_dag.sql.common import fetch, put_blob

if TYPE_CHECKING:
    from lightagent_dag.sql.store import SqlTaskGraphStore

__all__ = ["DEFAULT_MAX_BLOB_BYTES", "SqlArtifactStore"]

DEFAULT_MAX_BLOB_BYTES = 64 * 1024 * 1024
"""The largest artifact a database keeps unless told otherwise (PostgreSQL allows 1 GB)."""


class SqlArtifactStore:
    """Content-addressed, immutable blobs in the ``dag_blobs`` table of ``store``'s database.

    ``stage`` writes a blob in a transaction of its own, as any artifact store does;
    LightDAG's attempts instead hand the bytes to the store write that records the
    candidate (:meth:`describe`), so the blob and its record commit together. Reads check
    tenant, project, state, size and sha256, like :class:`LocalArtifactStore`'s.
    """

    def __init__(self, store: SqlTaskGraphStore, *, max_bytes: int | None = None) -> None:
        from lightagent_dag.sql.store import SqlTaskGraphStore

        if not isinstance(store, SqlTaskGraphStore):
            raise DAGError(
                "LA-CONFIG",
                f"SqlArtifactStore needs a SqlTaskGraphStore, got {type(store).__name__}",
            )
        self.store = store
        self.max_bytes = DEFAULT_MAX_BLOB_BYTES if max_bytes is None else max_bytes

    def describe(
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
    ) -> tuple[bytes, ArtifactManifest]:
        """Check ``content`` and build its staged manifest without writing: the bytes go with a later store write."""
        limit = self.max_bytes if max_bytes is None else min(max_bytes, self.max_bytes)
        return new_manifest(
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
        content, manifest = self.describe(
            content,
            run_id=run_id,
            task_id=task_id,
            attempt_id=attempt_id,
            tenant_id=tenant_id,
            project_id=project_id,
            media_type=media_type,
            contract_hash=contract_hash,
            dependency_manifest=dependency_manifest,
            max_bytes=max_bytes,
        )
        self.store.transaction(lambda conn: put_blob(self.store, conn, manifest, content))
        return manifest

    def read(
        self, manifest: ArtifactManifest, context: Any = None, *, require_published: bool = True
    ) -> bytes:
        """The artifact's bytes, after checking scope, state, size and sha256."""
        name = check_readable(manifest, context, require_published)
        rows = self.store.transaction(
            lambda conn: fetch(
                self.store,
                conn,
                "SELECT content FROM dag_blobs WHERE tenant_id=:bt AND project_id=:bp AND content_hash=:bh",
                {"bt": manifest.tenant_id, "bp": manifest.project_id, "bh": manifest.content_hash},
            ),
            read=True,
        )
        return check_content(manifest, bytes(rows[0][0]) if rows else None, name)

    def check_integrity(self, manifest: ArtifactManifest) -> bool:
        """Whether the blob is present and matches the manifest's size and sha256."""
        try:
            self.read(replace(manifest, state="published"))
        except DAGError:
            return False
        return True

    def carried_by(self, store: Any) -> bool:
        """Whether ``store``'s attempt writes can carry this store's blobs (the same database)."""
        return store is self.store or (
            getattr(store, "engine", None) is not None
            and str(store.engine.url) == str(self.store.engine.url)
        )
