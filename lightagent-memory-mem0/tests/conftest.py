"""mem0 against the loopback server: its LLM and embeddings on 127.0.0.1, Qdrant embedded.

mem0 writes a config file into ``MEM0_DIR`` when imported and reads ``MEM0_TELEMETRY``
then: both are set before the first import (telemetry off, a temporary folder).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="la-mem0-"))
os.environ["MEM0_TELEMETRY"] = "False"

EXTRACTOR = "mem0-extractor"
DIMS = 64


@pytest.fixture(scope="module")
def mem0_server() -> Iterator[object]:
    """A loopback server for mem0 alone (embeddings, and the extraction model's route)."""
    from lightagent_contracts import LoopbackServer
    from lightagent_memory_mem0 import echo_facts

    with LoopbackServer(embedding_dimensions=DIMS) as server:
        server.route(EXTRACTOR, echo_facts)
        yield server


@pytest.fixture
def mem0_options() -> dict:
    """The ``Mem0Memory`` options every test uses (the loopback's extraction model, small vectors)."""
    return {"api_key": "test", "llm_model": EXTRACTOR, "embedding_dims": DIMS}


@pytest.fixture
def server(loopback_server):
    """The function-scoped loopback server, also answering as mem0's extraction model."""
    from lightagent_memory_mem0 import echo_facts

    loopback_server.route(EXTRACTOR, echo_facts)
    return loopback_server


@pytest.fixture
def make_mem0(mem0_server, tmp_path):
    """A factory of fresh ``Mem0Memory`` backends (in-memory Qdrant unless ``path=``)."""
    from lightagent_memory_mem0 import Mem0Memory

    made = []

    def make(**kwargs):
        kwargs.setdefault("infer", False)
        memory = Mem0Memory(
            base_url=mem0_server.base_url,
            api_key="test",
            llm_model=EXTRACTOR,
            embedding_model="loopback-embedding",
            embedding_dims=DIMS,
            **kwargs,
        )
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.close()
