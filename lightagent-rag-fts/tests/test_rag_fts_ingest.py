"""Ingest on both backends: chunking, replacement, removal, listing, reading, reindex, bad input."""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from lightagent.errors import ConfigurationError, StorageError, ValidationError
from lightagent_rag_fts import (
    PostgresFTSRetrievalProvider,
    RetrievalDocument,
    SqliteFTSRetrievalProvider,
)

SENTENCE = "Sentence number {i} talks about topic {i} in some detail."


def _long_text(paragraphs: int = 6, sentences: int = 8) -> str:
    return "\n\n".join(
        " ".join(SENTENCE.format(i=p * 100 + s) for s in range(sentences))
        for p in range(paragraphs)
    )


def test_chunks_respect_size_and_end_on_sentences(make_provider: Callable[..., Any]) -> None:
    provider = make_provider(chunk_size=300, chunk_overlap=60)
    text = _long_text()
    provider.ingest(RetrievalDocument(text, document_id="long"))
    chunks = []
    position = 0
    while (chunk := provider.read_chunk(f"long:{position}")) is not None:
        chunks.append(chunk)
        position += 1
    assert len(chunks) > 6
    for chunk in chunks:
        assert len(chunk.content) <= 300
        assert chunk.content in text
        assert chunk.content.endswith("."), chunk.content[-40:]
        assert re.match(r"^Sentence number \d+", chunk.content), chunk.content[:40]
    # Every sentence is in some chunk, and neighbours share text (the overlap).
    for i in (0, 105, 507):
        assert any(SENTENCE.format(i=i) in c.content for c in chunks)
    shared = [
        a.content.split(". ")[-1] in b.content
        for a, b in itertools.pairwise(chunks)
        if ". " in a.content
    ]
    assert shared and all(shared)


def test_a_text_without_boundaries_is_still_cut(make_provider: Callable[..., Any]) -> None:
    provider = make_provider(chunk_size=100, chunk_overlap=0)
    provider.ingest(RetrievalDocument("a" * 1000, document_id="flat"))
    assert provider.count_chunks() == 10


def test_reingest_replaces_the_document(make_provider: Callable[..., Any]) -> None:
    provider = make_provider(chunk_size=300, chunk_overlap=0)
    provider.ingest(RetrievalDocument(_long_text(), document_id="d", title="Old"))
    assert provider.count_chunks() > 3
    provider.ingest(
        RetrievalDocument("A short replacement about kiwis.", document_id="d", title="New")
    )
    assert provider.count_chunks() == 1
    assert provider.search("sentence topic") == []
    (hit,) = provider.search("kiwis")
    assert (hit.title, hit.chunk_id) == ("New", "d:0")
    assert [d.title for d in provider.list_documents()] == ["New"]


def test_a_batch_naming_an_id_twice_keeps_the_last(make_provider: Callable[..., Any]) -> None:
    provider = make_provider()
    ids = provider.ingest(
        [
            {"document_id": "x", "content": "first apples"},
            {"document_id": "x", "content": "then pears"},
        ]
    )
    assert ids == ["x", "x"]
    assert provider.search("apples") == [] and len(provider.search("pears")) == 1


def test_remove_and_list(make_provider: Callable[..., Any]) -> None:
    provider = make_provider()
    provider.ingest(
        [
            RetrievalDocument("Alpha text.", document_id="a", tenant_id="t1", metadata={"k": 1}),
            RetrievalDocument("Beta text.", document_id="b", tenant_id="t2"),
        ]
    )
    docs = provider.list_documents()
    assert [d.document_id for d in docs] == ["a", "b"]
    assert docs[0].metadata == {"k": 1} and docs[0].content == "Alpha text."
    assert [d.document_id for d in provider.list_documents(tenant_id="t2")] == ["b"]
    assert [d.document_id for d in provider.list_documents(k=1)] == ["a"]
    assert provider.remove("a") is True
    assert provider.remove("a") is False
    assert provider.read_chunk("rag:a:0") is None
    assert [d.document_id for d in provider.list_documents()] == ["b"]


def test_extra_keys_of_a_dict_document_are_kept_as_metadata(
    make_provider: Callable[..., Any],
) -> None:
    provider = make_provider()
    provider.ingest({"document_id": "d", "content": "Plain words.", "lang": "de"})
    assert provider.list_documents()[0].metadata == {"lang": "de"}
    assert provider.search("plain", lang="de")


def test_reindex_applies_a_new_chunk_size(make_provider: Callable[..., Any], request: Any) -> None:
    big = make_provider(chunk_size=5000, chunk_overlap=0)
    big.ingest(RetrievalDocument(_long_text(), document_id="d"))
    assert big.count_chunks() == 1
    if isinstance(big, SqliteFTSRetrievalProvider):
        small = SqliteFTSRetrievalProvider(big.path, chunk_size=300, chunk_overlap=30)
    else:
        small = PostgresFTSRetrievalProvider(
            big.url, table=big.table, chunk_size=300, chunk_overlap=30
        )
    try:
        count = small.reindex()
        assert count == small.count_chunks() == big.count_chunks() > 5
        assert small.search("topic 507")[0].chunk_id != "d:0"
    finally:
        small.close()


def test_an_empty_document_has_no_chunks_but_is_listed(make_provider: Callable[..., Any]) -> None:
    provider = make_provider()
    provider.ingest(RetrievalDocument("   ", document_id="blank"))
    assert provider.count_chunks() == 0
    assert [d.document_id for d in provider.list_documents()] == ["blank"]


@pytest.mark.parametrize(
    "bad", [{"title": "no content"}, {"content": 42}, {"content": "x", "metadata": [1]}, 7]
)
def test_a_document_without_text_content_is_refused(
    make_provider: Callable[..., Any], bad: Any
) -> None:
    provider = make_provider()
    with pytest.raises(ValidationError) as caught:
        provider.ingest(bad)
    assert caught.value.code == "LA-VALIDATION"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"chunk_size": 99},
        {"chunk_size": 1000, "chunk_overlap": 600},
        {"chunk_overlap": -1},
        {"table": "x; drop"},
    ],
)
def test_bad_configuration_is_refused(
    make_provider: Callable[..., Any], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        make_provider(**kwargs)
    assert caught.value.code == "LA-CONFIG" and caught.value.hint


def test_a_missing_folder_is_a_configuration_error(tmp_path: Any) -> None:
    with pytest.raises(ConfigurationError):
        SqliteFTSRetrievalProvider(tmp_path / "nope" / "rag.db")


def test_create_dirs_and_the_default_location_make_the_folder(tmp_path: Any, monkeypatch) -> None:
    made = SqliteFTSRetrievalProvider(tmp_path / "new" / "deeper" / "rag.db", create_dirs=True)
    assert (tmp_path / "new" / "deeper").is_dir()
    made.close()
    monkeypatch.chdir(tmp_path)
    # The seeds' runtime guide's location, relative to the working directory.
    SqliteFTSRetrievalProvider(".lightagent/knowledge.sqlite3").close()
    assert (tmp_path / ".lightagent" / "knowledge.sqlite3").is_file()
    with pytest.raises(ConfigurationError):
        SqliteFTSRetrievalProvider(".lightagnet/knowledge.sqlite3")


def test_a_non_postgres_url_is_refused() -> None:
    with pytest.raises(ConfigurationError) as caught:
        PostgresFTSRetrievalProvider("mysql://localhost/db")
    assert caught.value.code == "LA-CONFIG"


def test_an_unreachable_postgres_is_a_storage_error() -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(StorageError) as caught:
        PostgresFTSRetrievalProvider("postgresql://postgres@127.0.0.1:1/none", connect_timeout=1)
    assert caught.value.code == "LA-STORAGE-UNAVAILABLE"


def test_the_index_survives_a_reopen(tmp_path: Any) -> None:
    path = tmp_path / "rag.db"
    with SqliteFTSRetrievalProvider(path) as first:
        first.ingest(RetrievalDocument("Persistent knowledge about otters.", document_id="o"))
    with SqliteFTSRetrievalProvider(path) as second:
        assert second.search("otters")[0].citation_id == "rag:o:0"


def test_concurrent_ingests_all_land(make_provider: Callable[..., Any]) -> None:
    import threading

    provider = make_provider()
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for i in range(20):
                provider.ingest(
                    RetrievalDocument(
                        f"Worker {worker} note {i} about otters.", document_id=f"{worker}-{i}"
                    )
                )
        except BaseException as exc:  # collected: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert provider.count_chunks() == 80
    assert len(provider.search("otters", limit=100)) == 80


def test_importing_the_plugin_loads_no_driver() -> None:
    import subprocess
    import sys

    code = (
        "import sys, lightagent_rag_fts.plugin, lightagent_rag_fts; "
        "print(sorted(m for m in ('psycopg', 'lightagent_rag_fts.sqlite_fts', "
        "'lightagent_rag_fts.postgres_fts') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.postgres
def test_plain_postgresql_urls_work_too(postgres_url: str) -> None:
    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with PostgresFTSRetrievalProvider(plain, table=f"rag_plain_{uuid.uuid4().hex[:8]}") as provider:
        provider.ingest(RetrievalDocument("Plain URL, same index.", document_id="p"))
        assert provider.search("plain index")[0].citation_id == "rag:p:0"


def test_an_in_memory_sqlite_index_works() -> None:
    with SqliteFTSRetrievalProvider(":memory:") as provider:
        provider.ingest(RetrievalDocument("Ephemeral facts about lemurs.", document_id="m"))
        assert provider.search("lemurs")[0].document_id == "m"


def test_ingest_returns_an_id_for_one_document_and_ids_for_many(
    make_provider: Callable[..., Any],
) -> None:
    # issue 28: the seeds' ingest(document) returns the document's id
    provider = make_provider()
    assert provider.ingest({"document_id": "one", "content": "plums"}) == "one"
    text_id = provider.ingest("just text")
    assert isinstance(text_id, str) and text_id in [
        d.document_id for d in provider.list_documents()
    ]
    assert provider.ingest([{"document_id": "a", "content": "figs"}]) == ["a"]
