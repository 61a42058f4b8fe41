"""lightagent: a small microkernel for LLM agents, extended by plugins.

Importing this package is cheap: every public name is loaded from its module on first
use, and no plugin, model client or database driver is imported until needed.
"""

from __future__ import annotations

from lightagent._version import __version__
from lightagent.lazy import lazy_exports

# No `typing` import here: it costs more than the rest of this module together.

# Public name -> the kernel module it lives in: the one place that says so. A distribution
# exports its own names from here through its `lightagent.exports` entry points; a seeds
# name whose distribution is not installed raises MissingExtraError (LA-MISSING-EXTRA)
# naming `pip install 'lightagent-core[extra]'` (lightagent/vocabulary.py).
_EXPORTS: dict[str, str] = {
    # kernel
    "hookimpl": "lightagent.hookspecs",
    "hookspec": "lightagent.hookspecs",
    "Registry": "lightagent.registry",
    "ProviderEntry": "lightagent.registry",
    "PluginHost": "lightagent.plugins",
    "PluginInfo": "lightagent.plugins",
    "get_host": "lightagent.plugins",
    "get_registry": "lightagent.plugins",
    # errors
    "LightAgentError": "lightagent.errors",
    "ModelError": "lightagent.errors",
    "ToolError": "lightagent.errors",
    "ValidationError": "lightagent.errors",
    "ConfigurationError": "lightagent.errors",
    "PolicyError": "lightagent.errors",
    "ApprovalError": "lightagent.errors",
    "BudgetError": "lightagent.errors",
    "CancelledError": "lightagent.errors",
    "StorageError": "lightagent.errors",
    "PluginError": "lightagent.errors",
    "MissingExtraError": "lightagent.errors",
    "ERROR_TAXONOMY": "lightagent.errors",
    "classify_exception": "lightagent.errors",
    "LightAgentErrorInfo": "lightagent.errors",
    "format_lightagent_error": "lightagent.errors",
    "format_error_code": "lightagent.errors",
    "seeds_keywords": "lightagent.keywords",
    # agent loop
    "RunContext": "lightagent.interceptors",
    "PhaseOutcome": "lightagent.interceptors",
    "Interceptor": "lightagent.interceptors",
    "RunObserver": "lightagent.interceptors",
    "add_global_observer": "lightagent.interceptors",
    "remove_global_observer": "lightagent.interceptors",
    "global_observers": "lightagent.interceptors",
    "idempotency_key": "lightagent.loop",
    "LightAgent": "lightagent.agent",
    "RunResult": "lightagent.results",
    "RunOptions": "lightagent.run.run_options",
    "StreamEvent": "lightagent.results",
    "CancellationToken": "lightagent.cancellation",
    # models
    "Usage": "lightagent.models.base",
    "Model": "lightagent.models.base",
    "ModelRequest": "lightagent.models.base",
    "ModelResponse": "lightagent.models.base",
    "ToolCall": "lightagent.models.base",
    "OpenAIModel": "lightagent.models.openai_compat",
    "ProviderProfile": "lightagent.models.profiles",
    "get_profile": "lightagent.models.profiles",
    "ScriptedModel": "lightagent.models.scripted",
    # tools
    "as_tool": "lightagent.tools.decorator",
    "ToolOutcome": "lightagent.tools.dispatch",
    "tool": "lightagent.tools.decorator",
    "Tool": "lightagent.tools.decorator",
    "ToolRegistry": "lightagent.tools.registry",
    "AsyncToolDispatcher": "lightagent.tools.dispatch",
    # toolsets
    "Toolset": "lightagent.toolsets.protocol",
    "BaseToolset": "lightagent.toolsets.protocol",
    "ToolDefinition": "lightagent.toolsets.protocol",
    "ToolCallContext": "lightagent.toolsets.protocol",
    "ToolResult": "lightagent.toolsets.protocol",
    "FunctionToolset": "lightagent.toolsets.function",
    "ToolsetConflict": "lightagent.toolsets.router",
    # memory and retrieval seams
    "MemoryProtocol": "lightagent.memory.protocol",
    "InMemoryMemory": "lightagent.memory.reference",
    "RetrievalProtocol": "lightagent.retrieval.protocol",
    "SearchHit": "lightagent.retrieval.protocol",
    "InMemoryRetrieval": "lightagent.retrieval.reference",
    # events, sessions, trace
    "SessionManager": "lightagent.events.manager",
    "SessionReplay": "lightagent.events.manager",
    "SessionCheckpoint": "lightagent.events.manager",
    "SessionBinding": "lightagent.events.binding",
    "ExportingObserver": "lightagent.events.trace",
    "export_trace": "lightagent.events.trace",
    "TraceExporter": "lightagent.events.trace",
    "normalize_usage": "lightagent.events.trace",
    "ResumePlan": "lightagent.events.resume",
    "SessionInfo": "lightagent.events.store",
    "SessionEvent": "lightagent.events.model",
    "SessionStore": "lightagent.events.store",
    "SessionStoreBase": "lightagent.events.store",
    "EventLog": "lightagent.events.store",
    "RunStore": "lightagent.events.store",
    "InMemorySessionStore": "lightagent.events.memory_store",
    "JsonlSessionStore": "lightagent.events.jsonl_store",
    "SqlSessionStore": "lightagent.events.sql_store",
    "SqliteSessionStore": "lightagent.events.sql_store",
    "ContextProjector": "lightagent.events.projector",
    "TraceSummary": "lightagent.events.trace",
    "summarize_trace": "lightagent.events.trace",
    "JsonlTraceExporter": "lightagent.events.trace",
    # progress lines
    "ProgressLine": "lightagent.progress",
    "redact": "lightagent.redaction",
    "RedactingFilter": "lightagent.events.log_redaction",
    "install_log_redaction": "lightagent.events.log_redaction",
    # the policy and hook vocabulary the control plane (lightagent-control) speaks
    "PolicyRequest": "lightagent.policy",
    "PolicyDecision": "lightagent.policy",
    "HookContext": "lightagent.hooks",
    "HookDecision": "lightagent.hooks",
    "HookResult": "lightagent.hooks.types",
    # plugin metadata (the lightagent_manifest hook) and the author kit (lightagent-contracts)
    "ConnectorManifest": "lightagent.manifest",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), plugins=True)

# Type checkers read these instead of the lazy ``__getattr__`` (which they see as ``Any``), so
# ``LightAgent.run``'s overloads reach user code. Only they evaluate the block (mypy and
# pyright take any name ``TYPE_CHECKING`` as true), so importing stays as cheap as above.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from lightagent.agent import LightAgent as LightAgent
    from lightagent.cancellation import CancellationToken as CancellationToken
    from lightagent.models.scripted import ScriptedModel as ScriptedModel
    from lightagent.results import RunResult as RunResult
    from lightagent.results import StreamEvent as StreamEvent
    from lightagent.run.run_options import RunOptions as RunOptions
