"""lightagent-otel: OpenTelemetry GenAI instrumentation for lightagent.

from opentelemetry.sdk.trace import TracerProvider
from lightagent_otel import LightAgentInstrumentor

LightAgentInstrumentor().instrument(tracer_provider=TracerProvider())
"""

from __future__ import annotations

from lightagent_otel.instrumentor import LightAgentInstrumentor
from lightagent_otel.tracetools import tracetools_observer

__version__ = "0.1.0"
__all__ = ["LightAgentInstrumentor", "__version__", "tracetools_observer"]
