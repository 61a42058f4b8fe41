"""The seeds' ``LightAgent(tracetools=...)``: one agent's runs as OpenTelemetry spans.

The seeds sent traces to Langfuse through its SDK. Langfuse also takes OTLP, so here the
configuration becomes an OTLP/HTTP exporter aimed at ``<langfuse_host>/api/public/otel``
(basic auth from the key pair), and any other OpenTelemetry backend is one
``{"tracer_provider": provider}`` away. The spans are the ones
:class:`~lightagent_otel.LightAgentInstrumentor` writes, for this agent only.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from lightagent.errors import ConfigurationError, MissingExtraError

from lightagent_otel.observer import SpanObserver

__all__ = ["LANGFUSE_OTLP_PATH", "langfuse_otlp_settings", "tracetools_observer"]

#: Langfuse's OTLP traces endpoint, below its host.
LANGFUSE_OTLP_PATH = "/api/public/otel/v1/traces"


def _config(tracetools: Any) -> dict[str, Any]:
    if not isinstance(tracetools, Mapping):
        raise ConfigurationError(
            "LA-CONFIG",
            f"tracetools= must be a dict, got {type(tracetools).__name__}",
            hint='Pass {"TraceToolConfig": {"langfuse_enabled": True, "langfuse_host": ..., '
            '"langfuse_public_key": ..., "langfuse_secret_key": ...}} or {"tracer_provider": p}.',
        )
    inner = tracetools.get("TraceToolConfig", tracetools)
    return dict(inner) if isinstance(inner, Mapping) else {}


def langfuse_otlp_settings(config: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """(endpoint, headers) of the OTLP exporter for a seeds' Langfuse configuration."""
    host = str(config.get("langfuse_host") or "https://cloud.langfuse.com").rstrip("/")
    public, secret = config.get("langfuse_public_key"), config.get("langfuse_secret_key")
    if not public or not secret:
        raise ConfigurationError(
            "LA-CONFIG",
            "tracetools= needs langfuse_public_key and langfuse_secret_key",
            hint="Give both keys (Langfuse > Settings > API keys), or langfuse_enabled=False.",
        )
    token = base64.b64encode(f"{public}:{secret}".encode()).decode()
    return host + LANGFUSE_OTLP_PATH, {"Authorization": f"Basic {token}"}


def _otlp_modules() -> tuple[Any, Any, Any]:
    import importlib

    try:
        sdk = importlib.import_module("opentelemetry.sdk.trace")
        export = importlib.import_module("opentelemetry.sdk.trace.export")
        otlp = importlib.import_module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    except ImportError as exc:
        install = "pip install 'lightagent-otel[otlp]'"
        raise MissingExtraError(
            "LA-MISSING-EXTRA",
            f"tracetools= (Langfuse over OTLP) needs {exc.name or 'the OTLP exporter'}, "
            "which is not installed",
            hint=f"{install} (opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http)",
            details={"install": install, "extra": "otlp"},
        ) from exc
    return sdk, export, otlp


def tracetools_observer(tracetools: Any) -> SpanObserver | None:
    """A run observer for ``tracetools=`` (None when it turns tracing off).

    ``{"tracer_provider": provider}`` writes to that provider. The seeds' Langfuse form
    builds an SDK provider with a batching OTLP/HTTP exporter (needs
    ``opentelemetry-sdk`` and ``opentelemetry-exporter-otlp-proto-http``).
    """
    from opentelemetry import trace

    from lightagent_otel import __version__
    from lightagent_otel.attributes import SCHEMA_URL

    config = _config(tracetools)
    capture = bool(config.get("capture_content", False))
    provider = config.get("tracer_provider")
    if provider is None:
        if not config.get("langfuse_enabled", True):
            return None
        endpoint, headers = langfuse_otlp_settings(config)
        sdk, export, otlp = _otlp_modules()
        provider = sdk.TracerProvider()
        provider.add_span_processor(
            export.BatchSpanProcessor(otlp.OTLPSpanExporter(endpoint=endpoint, headers=headers))
        )
    tracer = trace.get_tracer(
        "lightagent_otel", __version__, tracer_provider=provider, schema_url=SCHEMA_URL
    )
    return SpanObserver(tracer, capture_content=capture)
