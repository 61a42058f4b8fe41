"""The code blocks of docs/observability.md run (the OTLP one needs network and an account)."""

from __future__ import annotations

import re
from pathlib import Path

from lightagent_otel import LightAgentInstrumentor

DOC = Path(__file__).resolve().parents[2] / "docs" / "observability.md"


def test_observability_doc_blocks_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    runnable = [b for b in blocks if "OTLPSpanExporter" not in b]
    assert len(runnable) >= 3
    namespace: dict = {}
    try:
        for block in runnable:
            exec(compile(block, str(DOC), "exec"), namespace)
    finally:
        LightAgentInstrumentor().uninstrument()
    names = sorted(s.name for s in namespace["exporter"].get_finished_spans())
    assert names == ["chat scripted", "chat scripted", "execute_tool add", "invoke_agent calc"]


def test_the_seeds_tracetools_without_keys_is_a_typed_error() -> None:
    import pytest
    from lightagent import ConfigurationError, LightAgent

    # tracetools= is wired to this instrumentation now (issue 18): a Langfuse form
    # without its key pair is refused, naming what is missing.
    with pytest.raises(ConfigurationError) as info:
        LightAgent(tracetools={"langfuse": {"host": "x"}})
    assert "langfuse_public_key" in info.value.message
