"""Item 11 of issue 18: ``tracetools=`` exports spans through lightagent-otel, and
``log_file=`` receives the agent's log, redacted."""

from __future__ import annotations

import pytest
from lightagent import LightAgent, MissingExtraError

otel_sdk = pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("lightagent_otel")


def test_tracetools_with_a_tracer_provider_exports_spans(loopback_server) -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = otel_sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    loopback_server.reply("traced answer")
    agent = LightAgent(
        name="calc",
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        tracetools={"tracer_provider": provider},
    )
    assert agent.run("hi") == "traced answer"
    names = sorted(s.name for s in exporter.get_finished_spans())
    assert "invoke_agent calc" in names and any(n.startswith("chat") for n in names)
    # Only this agent is traced: another agent writes no spans there.
    loopback_server.reply("untraced")
    LightAgent(model="gpt-4.1", api_key="k", base_url=loopback_server.base_url).run("hi")
    assert len(exporter.get_finished_spans()) == len(names)


def test_the_seeds_langfuse_configuration() -> None:
    from lightagent_otel.tracetools import langfuse_otlp_settings

    config = {
        "langfuse_enabled": True,
        "langfuse_host": "https://langfuse.example.com/",
        "langfuse_public_key": "pk-lf-1",
        "langfuse_secret_key": "sk-lf-2",
    }
    endpoint, headers = langfuse_otlp_settings(config)
    assert endpoint == "https://langfuse.example.com/api/public/otel/v1/traces"
    assert headers["Authorization"] == "Basic cGstbGYtMTpzay1sZi0y"
    off = LightAgent(
        model="m", api_key="k", tracetools={"TraceToolConfig": {"langfuse_enabled": False}}
    )
    assert off._observers == []
    try:
        import opentelemetry.exporter.otlp.proto.http  # noqa: F401
    except ImportError:
        with pytest.raises(MissingExtraError) as info:
            LightAgent(model="m", api_key="k", tracetools={"TraceToolConfig": config})
        assert "lightagent-otel[otlp]" in info.value.hint
    else:
        agent = LightAgent(model="m", api_key="k", tracetools={"TraceToolConfig": config})
        assert len(agent._observers) == 1


def test_log_file_receives_the_agents_log_redacted(loopback_server, tmp_path) -> None:
    log = tmp_path / "agent.log"
    loopback_server.reply("hello")
    agent = LightAgent(
        name="logged",
        model="gpt-4.1",
        api_key="sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
        base_url=loopback_server.base_url,
        log_file=str(log),
        debug=True,
    )
    agent.run("my api_key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789, say hello")
    for handler in agent.logger.handlers:
        handler.flush()
    text = log.read_text()
    assert "run_start" in text and "run_end" in text
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789" not in text


def test_log_file_writes_never_happen_on_the_event_loop(
    loopback_server, tmp_path, monkeypatch
) -> None:
    import asyncio
    import logging
    import threading

    writers: list[int] = []
    write = logging.FileHandler.emit

    def recording_emit(self, record):
        if self.baseFilename == str(log):  # pytest has a FileHandler of its own
            writers.append(threading.get_ident())
        return write(self, record)

    log = tmp_path / "async.log"
    monkeypatch.setattr(logging.FileHandler, "emit", recording_emit)
    loopback_server.reply("one", "two")
    agent = LightAgent(
        name="async-logged",
        model="gpt-4.1",
        api_key="k",
        base_url=loopback_server.base_url,
        log_file=str(log),
        debug=True,
    )

    async def main() -> int:
        await asyncio.gather(agent.arun("first"), agent.arun("second"))
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    for handler in agent.logger.handlers:
        handler.flush()  # off the loop: waits for the writer thread
    assert writers, "nothing was written to log_file"
    assert loop_thread not in writers
    text = log.read_text()
    assert text.count("run_start") == 2 and text.count("run_end") == 2
