"""``LightAgentInstrumentor``: the OpenTelemetry instrumentor convention for lightagent.

``instrument()`` adds one :class:`~lightagent_otel.observer.SpanObserver` as a global
run observer (``lightagent.add_global_observer``); ``uninstrument()`` removes it. It
installs no tracer provider and no exporter: spans go to the ``tracer_provider`` given,
else to the global provider the application set (nothing at all when it set none).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

from opentelemetry import trace
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from lightagent_otel.attributes import SCHEMA_URL
from lightagent_otel.content import ENV_CAPTURE
from lightagent_otel.observer import SpanObserver

__all__ = ["LightAgentInstrumentor"]

_TRUE = {"1", "true", "yes", "on"}


class LightAgentInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Trace every lightagent run with GenAI semantic-convention spans.

    ``instrument(tracer_provider=None, capture_content=None)``: ``capture_content``
    records messages, tool arguments and tool results on spans (redacted with
    ``lightagent.redact``); it defaults to the
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` environment variable, off
    when unset. Like every OpenTelemetry instrumentor it is a singleton.
    """

    _observer: SpanObserver | None = None

    def instrumentation_dependencies(self) -> Collection[str]:
        """The lightagent-core versions this instrumentation supports."""
        return ("lightagent-core >= 0.1.0, < 0.2",)

    def _instrument(self, **kwargs: Any) -> None:
        from lightagent.interceptors import add_global_observer

        from lightagent_otel import __version__

        capture = kwargs.get("capture_content")
        if capture is None:
            capture = os.environ.get(ENV_CAPTURE, "").strip().lower() in _TRUE
        tracer = trace.get_tracer(
            "lightagent_otel",
            __version__,
            tracer_provider=kwargs.get("tracer_provider"),
            schema_url=SCHEMA_URL,
        )
        self._observer = SpanObserver(tracer, capture_content=bool(capture))
        add_global_observer(self._observer)

    def _uninstrument(self, **kwargs: Any) -> None:
        from lightagent.interceptors import remove_global_observer

        if self._observer is not None:
            remove_global_observer(self._observer)
            self._observer = None

    @property
    def observer(self) -> SpanObserver | None:
        """The observer in use while instrumented (None otherwise)."""
        return self._observer
