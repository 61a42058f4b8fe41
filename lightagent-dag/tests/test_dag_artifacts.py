"""LocalArtifactStore: content-addressed, immutable, atomic, hash-checked, scoped, no symlinks or '..'."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace

import pytest
from lightagent import SecurityContext
from lightagent.errors import PolicyError
from lightagent_dag import DAGError, LocalArtifactStore


def stage(
    store: LocalArtifactStore, content: bytes, tenant: str = "acme", project: str = "p1", **kw
):
    return store.stage(
        content, run_id="r", task_id="t", attempt_id="a", tenant_id=tenant, project_id=project, **kw
    )


def test_content_addressed_layout_and_round_trip(tmp_path) -> None:
    store = LocalArtifactStore(tmp_path)
    manifest = stage(store, b"hello")
    digest = hashlib.sha256(b"hello").hexdigest()
    assert (
        manifest.content_hash == digest and manifest.byte_size == 5 and manifest.state == "staged"
    )
    assert manifest.relative_blob_path == f"acme/p1/{digest[:2]}/{digest}"
    assert (tmp_path / manifest.relative_blob_path).read_bytes() == b"hello"
    with pytest.raises(DAGError) as info:
        store.read(manifest)  # only published artifacts are served by default
    assert info.value.code == "LA-DAG-STATE"
    published = replace(manifest, state="published")
    assert store.read(published) == b"hello"
    assert store.read(manifest, require_published=False) == b"hello"
    # Same bytes again: the same blob, no temporary files left behind.
    again = stage(store, b"hello")
    assert again.relative_blob_path == manifest.relative_blob_path
    assert [p.name for p in (tmp_path / "acme/p1" / digest[:2]).iterdir()] == [digest]


def test_every_read_checks_the_hash(tmp_path) -> None:
    store = LocalArtifactStore(tmp_path)
    manifest = replace(stage(store, b"important"), state="published")
    path = tmp_path / manifest.relative_blob_path
    data = bytearray(path.read_bytes())
    data[0] ^= 0x01  # flip one bit
    path.write_bytes(bytes(data))
    with pytest.raises(DAGError) as info:
        store.read(manifest)
    assert info.value.code == "LA-DAG-ARTIFACT-INTEGRITY"
    assert store.check_integrity(manifest) is False
    # Staging the right bytes again repairs the blob; the corrupt one is never served.
    stage(store, b"important")
    assert store.read(manifest) == b"important" and store.check_integrity(manifest)
    path.unlink()
    with pytest.raises(DAGError) as info:
        store.read(manifest)
    assert info.value.code == "LA-DAG-ARTIFACT-INTEGRITY"


def test_reads_are_scoped_to_tenant_and_project(tmp_path) -> None:
    store = LocalArtifactStore(tmp_path)
    manifest = replace(stage(store, b"secret"), state="published")
    assert store.read(manifest, SecurityContext(tenant_id="acme", project_id="p1")) == b"secret"
    for ctx in (
        SecurityContext(tenant_id="other", project_id="p1"),
        SecurityContext(tenant_id="acme", project_id="p2"),
    ):
        with pytest.raises(PolicyError):
            store.read(manifest, ctx)


@pytest.mark.parametrize("tenant", ["..", "../x", "a/b", "", ".hidden", "x" * 200, "a\x00b"])
def test_unsafe_scopes_are_refused(tmp_path, tenant: str) -> None:
    with pytest.raises(DAGError) as info:
        stage(LocalArtifactStore(tmp_path), b"x", tenant=tenant)
    assert info.value.code == "LA-DAG-ARTIFACT-PATH"


def test_symlinks_are_refused(tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside, root / "acme")
    store = LocalArtifactStore(root)
    with pytest.raises(DAGError) as info:
        stage(store, b"x")
    assert info.value.code == "LA-DAG-ARTIFACT-PATH"
    assert list(outside.iterdir()) == []


def test_forged_manifest_paths_are_refused(tmp_path) -> None:
    store = LocalArtifactStore(tmp_path)
    manifest = replace(stage(store, b"x"), state="published")
    for forged in (
        replace(manifest, relative_blob_path="../../etc/passwd"),
        replace(manifest, content_hash="../" + "0" * 61),
    ):
        with pytest.raises(DAGError) as info:
            store.read(forged)
        assert info.value.code == "LA-DAG-ARTIFACT-PATH"


def test_size_limit_and_type(tmp_path) -> None:
    store = LocalArtifactStore(tmp_path, max_bytes=4)
    with pytest.raises(DAGError) as info:
        stage(store, b"12345")
    assert info.value.code == "LA-DAG-ARTIFACT-TOO-LARGE"
    with pytest.raises(DAGError):
        stage(store, "text")  # type: ignore[arg-type]
