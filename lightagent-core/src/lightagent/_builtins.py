"""The core's own plugin: built-in providers and commands, registered through the same hooks.

Providers are lazy ``"module:attribute"`` references, so registering them imports nothing.
"""

from __future__ import annotations

from typing import Any

from lightagent.hookspecs import Register, hookimpl


@hookimpl
def register_models(register: Register) -> None:
    register("openai", "lightagent.models.openai_compat:OpenAIModel")
    register("scripted", "lightagent.models.scripted:ScriptedModel")


@hookimpl
def register_session_stores(register: Register) -> None:
    register("memory", "lightagent.events.memory_store:InMemorySessionStore")
    register("jsonl", "lightagent.events.jsonl_store:JsonlSessionStore")
    register("sqlite", "lightagent.events.sql_store:SqliteSessionStore")
    register("sql", "lightagent.events.sql_store:SqlSessionStore")
    # URL form session_store="sqlite:///x.db"; lightagent-postgres registers postgresql://
    register("sqlite://", "lightagent.events.sql_store:SqlSessionStore")


@hookimpl
def register_memory(register: Register) -> None:
    register("in-memory", "lightagent.memory.reference:InMemoryMemory")


@hookimpl
def register_retrieval(register: Register) -> None:
    register("in-memory", "lightagent.retrieval.reference:InMemoryRetrieval")


@hookimpl
def register_exporters(register: Register) -> None:
    register("jsonl", "lightagent.events.trace:JsonlTraceExporter")


@hookimpl
def lightagent_manifest() -> dict[str, Any]:
    from lightagent._version import __version__

    return {
        "name": "lightagent-core",
        "version": __version__,
        "description": "Built-in providers of lightagent-core.",
    }
