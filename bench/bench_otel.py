"""What OpenTelemetry instrumentation adds to a run (``lightagent-otel``), against the raw SDK.

The same three scenarios as ``bench_agent.py`` (plain, tool, stream) against the same
loopback OpenAI-wire server in its own process. Three sides: the raw ``openai`` SDK
(the floor), ``LightAgent`` uninstrumented, and ``LightAgent`` with
``LightAgentInstrumentor`` writing spans to an SDK ``TracerProvider`` with a
``BatchSpanProcessor`` (what production uses; its exporter drops the spans, so export
I/O is not measured). Instrumentation is process-wide, so the two LightAgent sides run
in alternating blocks (instrument, a block, uninstrument, a block …) with the raw SDK
interleaved. Run: ``.venv/bin/python bench/bench_otel.py [iterations]``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_agent import NullModel, get_weather, our_side, p90, raw_side, start_server  # noqa: E402

BLOCK = 20


def make_instrumentor() -> tuple[Callable[[], None], Callable[[], None], Callable[[], None]]:
    from lightagent_otel import LightAgentInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans):  # type: ignore[no-untyped-def]
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Drop()))
    instrumentor = LightAgentInstrumentor()

    def on() -> None:
        instrumentor.instrument(tracer_provider=provider)

    def off() -> None:
        instrumentor.uninstrument()

    return on, off, provider.shutdown


def measure(
    raw: Callable[[], str],
    ours: Callable[[], str],
    on: Callable[[], None],
    off: Callable[[], None],
    n: int,
) -> tuple[list[float], list[float], list[float]]:
    clock = time.perf_counter
    for _ in range(BLOCK):  # warm-up, both ways
        raw()
        ours()
    on()
    for _ in range(BLOCK):
        ours()
    off()
    raw_t: list[float] = []
    plain_t: list[float] = []
    traced_t: list[float] = []
    for block in range(max(1, n // BLOCK)):
        traced = block % 2 == 1
        if traced:
            on()
        for _ in range(BLOCK):
            start = clock()
            raw()
            raw_t.append(clock() - start)
            start = clock()
            ours()
            (traced_t if traced else plain_t).append(clock() - start)
        if traced:
            off()
    return raw_t, plain_t, traced_t


def loop_only(
    on: Callable[[], None], off: Callable[[], None], n: int
) -> list[tuple[str, float, float]]:
    """Median µs per run without HTTP: the instrumentation's own cost per run."""
    from lightagent import LightAgent

    cases = [
        ("plain run (2 spans)", LightAgent(model=NullModel()), "hi"),
        (
            "one tool round, inline (4 spans)",
            LightAgent(model=NullModel(), tools=[get_weather], tool_timeout=None),
            "weather",
        ),
    ]
    rows = []
    for label, agent, query in cases:
        result = []
        for traced in (False, True):
            if traced:
                on()
            for _ in range(200):
                agent.run(query)
            times = []
            for _ in range(n):
                start = time.perf_counter()
                agent.run(query)
                times.append(time.perf_counter() - start)
            if traced:
                off()
            result.append(statistics.median(times) * 1e6)
        rows.append((label, result[0], result[1]))
    return rows


def busy_note(load: float) -> list[str]:
    """A warning line when the machine was oversubscribed while measuring."""
    cpus = os.cpu_count() or 1
    if load <= cpus:
        return []
    return [
        f"**Measured on an oversubscribed machine** (load average {load:.1f} on {cpus} CPUs): "
        "absolute times are inflated several-fold; read the ratios, and rerun `make bench` on "
        "a quiet machine for absolute figures.\n",
    ]


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    on, off, shutdown = make_instrumentor()
    proc, base_url = start_server()
    rows = []
    try:
        raw, ours = raw_side(base_url), our_side(base_url)
        for name in ("plain", "tool", "stream"):
            times = measure(raw[name], ours[name], on, off, iterations)
            rows.append((name, *times))
            med = [statistics.median(t) * 1000 for t in times]
            print(
                f"{name}: raw {med[0]:.3f} ms, ours {med[1]:.3f} ms, traced {med[2]:.3f} ms",
                flush=True,
            )
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    own = loop_only(on, off, 3000)
    shutdown()
    import opentelemetry.sdk.version as otel_version

    load = os.getloadavg()[0]
    lines = [
        "## OpenTelemetry instrumentation overhead\n",
        f"{iterations // 2} runs per side and scenario in alternating blocks of {BLOCK} (the raw SDK "
        "interleaved with both); loopback OpenAI-wire server in its own process; "
        f"`opentelemetry-sdk` {otel_version.__version__}, `BatchSpanProcessor` with an exporter that drops "
        f"the spans; content capture off; {os.cpu_count()} CPUs, load average {load:.1f} when it ended. "
        "Per-run wall time in ms, median / p90.\n",
        *busy_note(load),
        "| scenario | raw SDK | LightAgent | LightAgent + otel | otel / LightAgent (median) | "
        "LightAgent + otel / raw SDK (median / p90) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, raw_t, plain_t, traced_t in rows:
        med = [statistics.median(t) * 1000 for t in (raw_t, plain_t, traced_t)]
        top = [p90(t) * 1000 for t in (raw_t, plain_t, traced_t)]
        lines.append(
            f"| {name} | {med[0]:.3f} / {top[0]:.3f} | {med[1]:.3f} / {top[1]:.3f} | "
            f"{med[2]:.3f} / {top[2]:.3f} | {med[2] / med[1]:.3f}x | "
            f"{med[2] / med[0]:.3f}x / {top[2] / top[0]:.3f}x |"
        )
    lines += [
        "",
        "### The instrumentation alone",
        "",
        "Median per run with an in-process model that answers instantly (no HTTP): the spans'",
        "own cost. The tool round runs its tool inline (`tool_timeout=None`): with the default",
        "worker-thread hop, any extra Python work on the run's thread shows up as GIL hand-over",
        "waits that grow with the machine's load, which would hide what is measured here.",
        "",
        "| run | µs, not instrumented | µs, instrumented | added µs |",
        "|---|---:|---:|---:|",
        *(f"| {label} | {a:.1f} | {b:.1f} | {b - a:+.1f} |" for label, a, b in own),
    ]
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "otel.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
