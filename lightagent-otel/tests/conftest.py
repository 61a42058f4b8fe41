"""Fixtures for the lightagent-otel tests: the SDK's in-memory exporter behind the instrumentor."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from lightagent_otel import LightAgentInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass
class Traced:
    """The exporter, the provider and helpers to read what was exported."""

    exporter: InMemorySpanExporter
    provider: TracerProvider
    instrumentor: LightAgentInstrumentor

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.startswith(prefix)]

    def one(self, prefix: str) -> ReadableSpan:
        found = self.named(prefix)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        return [
            s
            for s in self.spans()
            if s.parent is not None and s.parent.span_id == parent.context.span_id
        ]

    def trace_ids(self) -> set[int]:
        return {s.context.trace_id for s in self.spans()}


def instrument(capture_content: bool = False, **kwargs: Any) -> Traced:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LightAgentInstrumentor()
    instrumentor.instrument(tracer_provider=provider, capture_content=capture_content, **kwargs)
    return Traced(exporter, provider, instrumentor)


@pytest.fixture
def traced() -> Iterator[Traced]:
    """Instrumented (content off) with an in-memory exporter; uninstrumented afterwards."""
    result = instrument()
    try:
        yield result
    finally:
        result.instrumentor.uninstrument()
        result.provider.shutdown()


@pytest.fixture
def traced_content() -> Iterator[Traced]:
    """Like ``traced`` with message content captured."""
    result = instrument(capture_content=True)
    try:
        yield result
    finally:
        result.instrumentor.uninstrument()
        result.provider.shutdown()
