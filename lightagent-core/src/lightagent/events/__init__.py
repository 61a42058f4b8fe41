"""Events are the source of truth: session events, stores, projections, trace, resume.

Names load on first use so that ``import lightagent.events`` stays cheap (the SQL
store imports SQLAlchemy only when it is built).
"""

from __future__ import annotations

from lightagent.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "SESSION_EVENT_TYPES": "lightagent.events.model",
    "SESSION_SCHEMA_VERSION": "lightagent.events.model",
    "EventMigrationRegistry": "lightagent.events.model",
    "SessionEvent": "lightagent.events.model",
    "event_migrations": "lightagent.events.model",
    "SessionInfo": "lightagent.events.store",
    "SessionStore": "lightagent.events.store",
    "InMemorySessionStore": "lightagent.events.memory_store",
    "JsonlSessionStore": "lightagent.events.jsonl_store",
    "IntegrityReport": "lightagent.events.jsonl_store",
    "SalvageReport": "lightagent.events.jsonl_store",
    "SqlSessionStore": "lightagent.events.sql_store",
    "SqliteSessionStore": "lightagent.events.sql_store",
    "redact": "lightagent.redaction",
    "redact_or_marker": "lightagent.redaction",
    "RedactingFilter": "lightagent.events.log_redaction",
    "install_log_redaction": "lightagent.events.log_redaction",
    "session_event_from_trace": "lightagent.events.mapping",
    "ExportReport": "lightagent.events.trace",
    "resolve_exporter": "lightagent.events.trace",
    "TurnView": "lightagent.events.projector",
    "Projection": "lightagent.events.projector",
    "SessionStoreBase": "lightagent.events.store",
    "redact_text": "lightagent.redaction",
    "is_secret_key": "lightagent.redaction",
    "ContextProjector": "lightagent.events.projector",
    "trim_messages": "lightagent.events.projector",
    "SessionManager": "lightagent.events.manager",
    "SessionReplay": "lightagent.events.manager",
    "SessionCheckpoint": "lightagent.events.manager",
    "SessionBinding": "lightagent.events.binding",
    "SessionRecorder": "lightagent.events.binding",
    "resolve_session_store": "lightagent.events.binding",
    "TraceSummary": "lightagent.events.trace",
    "TraceExporter": "lightagent.events.trace",
    "JsonlTraceExporter": "lightagent.events.trace",
    "ExportingObserver": "lightagent.events.trace",
    "export_trace": "lightagent.events.trace",
    "normalize_usage": "lightagent.events.trace",
    "summarize_trace": "lightagent.events.trace",
    "ResumePlan": "lightagent.events.resume",
    "UnknownCall": "lightagent.events.resume",
    "plan_resume": "lightagent.events.resume",
    "resume": "lightagent.events.resume",
    "aresume": "lightagent.events.resume",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
