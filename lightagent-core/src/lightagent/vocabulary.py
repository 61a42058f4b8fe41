"""The seeds' names that capability distributions provide, and the extra that installs each.

The kernel never imports a capability: a distribution claims its ``LightAgent`` keywords,
run options and agent attributes through the ``register_agent_extensions`` hook
(:mod:`lightagent.extensions`) and exports its public names through the
``lightagent.exports`` entry-point group. This table only says which ``pip install`` line
brings a name of the seeds (LightAgent 0.11) when nothing installed provides it, so that
seeds code fails at the line that uses the name with ``LA-MISSING-EXTRA``, never with a
bare ``TypeError`` or ``AttributeError``. It holds distribution and extra names, never a
module: adding a row cannot make the kernel depend on a plugin.
"""

from __future__ import annotations

__all__ = ["ATTRIBUTES", "DISTRIBUTIONS", "EXPORTS", "KEYWORDS", "RUN_OPTIONS", "distribution"]

#: extra of ``lightagent-core`` -> the distribution it installs.
DISTRIBUTIONS: dict[str, str] = {
    "flow": "lightagent-flow",
    "dag": "lightagent-dag",
    "mcp": "lightagent-mcp",
    "rag-fts": "lightagent-rag-fts",
    "mem0": "lightagent-memory-mem0",
    "guardrails": "lightagent-guardrails",
    "otel": "lightagent-otel",
    "serve": "lightagent-serve",
    "contracts": "lightagent-contracts",
    "thought": "lightagent-thought",
    "devtools": "lightagent-devtools",
    "swarm": "lightagent-swarm",
    "runtime": "lightagent-runtime",
    "memory": "lightagent-memory",
    "skills": "lightagent-skills",
    "review": "lightagent-review",
}

#: ``LightAgent(...)`` keyword -> (extra, the value that means "not used"). A keyword left
#: at that value needs nothing installed; any other value needs the extra.
KEYWORDS: dict[str, tuple[str, object]] = {
    "budget_limits": ("runtime", None),
    "progress_policy": ("runtime", None),
    "context_budget": ("runtime", None),
    "context_compactor": ("runtime", None),
    "skills_directories": ("skills", None),
    "auto_discover_skills": ("skills", True),
    "project_instructions": ("skills", False),
    "sandbox": ("skills", None),
    "enable_unsafe_python": ("skills", False),
    "tree_of_thought": ("thought", False),
    "tot_model": ("thought", None),
    "tot_api_key": ("thought", None),
    "tot_base_url": ("thought", None),
    "memory_policy": ("memory", None),
    "memory_namespace": ("memory", None),
    "self_learning": ("memory", False),
}

#: ``run(...)`` option -> (extra, the value that means "not used").
RUN_OPTIONS: dict[str, tuple[str, object]] = {
    "budget_limits": ("runtime", None),
    "progress_policy": ("runtime", None),
    "use_skills": ("skills", True),
    "light_swarm": ("swarm", None),
}

#: ``agent.<name>`` attribute or method -> extra.
ATTRIBUTES: dict[str, str] = {
    "context_budget": "runtime",
    "context_compactor": "runtime",
    "skill_manager": "skills",
    "tool_loader": "skills",
    "loaded_tools": "skills",
    "load_tools": "skills",
    "sandbox": "skills",
    "project_instructions": "skills",
    "reload_project_instructions": "skills",
    "create_tool": "skills",
    "acreate_tool": "skills",
    "register_generated_tool": "skills",
    "load_generated_tool": "skills",
    "tree_of_thought": "thought",
    "tot_model": "thought",
    "tot_client": "thought",
    "run_thought": "thought",
    "arun_thought": "thought",
    "runtime": "runtime",
    "job_manager": "runtime",
    "start_job": "runtime",
    "run_detachable": "runtime",
    "arun_detachable": "runtime",
    "send_message": "runtime",
    "goal_checks": "runtime",
    "create_goal": "runtime",
    "session_goals": "runtime",
    "memory_policy": "memory",
    "list_memory_candidates": "memory",
    "promote_memory_candidate": "memory",
    "apromote_memory_candidate": "memory",
    "setup_mcp": "mcp",
}

#: ``from lightagent import <name>`` -> extra.
EXPORTS: dict[str, str] = {
    "GuardrailDecision": "guardrails",
    "GuardrailManager": "guardrails",
    "RetrievalDocument": "rag-fts",
    "RetrievalResult": "rag-fts",
    "RetrievalProvider": "rag-fts",
    "SqliteFTSRetrievalProvider": "rag-fts",
    "PostgresFTSRetrievalProvider": "rag-fts",
    "SessionSearchProvider": "rag-fts",
    "LightAgentInstrumentor": "otel",
    "tracetools_observer": "otel",
    "validate_connector": "contracts",
    "BudgetLimits": "runtime",
    "BudgetExceeded": "runtime",
    "ProgressPolicy": "runtime",
    "ContextBudget": "runtime",
    "ContextCompactor": "runtime",
    "Skill": "skills",
    "ToolLoader": "skills",
    "SkillManager": "skills",
    "SkillToolset": "skills",
    "SkillProviderAdapter": "skills",
    "ToolProviderAdapter": "skills",
    "SandboxProvider": "skills",
    "ScriptResult": "skills",
    "discover_project_instructions": "skills",
    "GeneratedTool": "skills",
    "ToolReview": "skills",
    "ScanReport": "skills",
    "ToolSignature": "skills",
    "scan_source": "skills",
    "load_installed": "skills",
    "Finding": "skills",
    "ALLOWED_MODULES": "skills",
    "FileSystem": "skills",
    "TreeOfThought": "thought",
    "LightEvaluator": "devtools",
    "EvaluationCase": "devtools",
    "EvaluationCaseResult": "devtools",
    "EvaluationReport": "devtools",
    "render_trace_page": "devtools",
    "TraceRecorder": "devtools",
    "JobManager": "runtime",
    "JobRecord": "runtime",
    "JobStatus": "runtime",
    "JobContext": "runtime",
    "JobError": "runtime",
    "JobFencedError": "runtime",
    "SubagentManager": "runtime",
    "SubagentRecord": "runtime",
    "SubagentResult": "runtime",
    "SubagentToolset": "runtime",
    "AgentRuntime": "runtime",
    "LightSwarm": "swarm",
    "MemoryPolicy": "memory",
    "MemoryProviderAdapter": "memory",
    "MemoryScope": "memory",
    "MemoryCandidate": "memory",
    "MemoryPromotionDecision": "memory",
    "SharedMemoryPool": "memory",
    "SharedMemoryRecord": "memory",
    "HumanApprovalHook": "review",
    "HumanApprovalTool": "review",
    "ApprovalRequest": "review",
    "ApprovalDecision": "review",
    "InMemoryReviewStore": "review",
    "JsonReviewStore": "review",
    "SqlReviewStore": "review",
    "HumanFeedback": "review",
    "record_feedback": "review",
    "PolicyEngine": "review",
    "PolicyHook": "review",
    "SqlTokenLedger": "review",
}


def distribution(extra: str) -> str:
    """The distribution that ``lightagent-core[extra]`` installs."""
    return DISTRIBUTIONS.get(extra, f"lightagent-{extra}")
