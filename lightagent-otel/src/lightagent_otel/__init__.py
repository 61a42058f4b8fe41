"""lightagent-otel: OpenTelemetry GenAI instrumentation for lightagent.

from opentelemetry.sdk.trace import TracerProvider
from lightagent_otel import LightAgentInstrumentor

LightAgentInstrumentor().instrument(tracer_provider=TracerProvider())
"""

from __future__ import annotations

from lightagent_otel.instrumentor import LightAgentInstrumentor

__version__ = "0.1.0"
__all__ = ["LightAgentInstrumentor", "__version__"]
