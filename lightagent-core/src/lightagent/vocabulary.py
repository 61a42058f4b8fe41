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

#: ``from lightagent import <name>`` -> extra (below: each extra's names, space-separated).
_NAMES: dict[str, str] = {
    "guardrails": "GuardrailDecision GuardrailManager",
    "rag-fts": (
        "RetrievalDocument RetrievalResult RetrievalProvider SqliteFTSRetrievalProvider "
        "PostgresFTSRetrievalProvider SessionSearchProvider"
    ),
    "otel": "LightAgentInstrumentor tracetools_observer",
    "contracts": "validate_connector",
    "runtime": (
        "BudgetLimits BudgetExceeded ProgressPolicy ContextBudget ContextCompactor JobManager "
        "JobRecord JobStatus JobContext JobError JobFencedError SubagentManager SubagentRecord "
        "SubagentResult SubagentToolset AgentRuntime"
    ),
    "skills": (
        "Skill ToolLoader SkillManager SkillToolset SkillProviderAdapter ToolProviderAdapter "
        "SandboxProvider ScriptResult discover_project_instructions GeneratedTool ToolReview "
        "ScanReport ToolSignature scan_source load_installed Finding ALLOWED_MODULES FileSystem "
        "execute_python_code execute_python_file execute_python_code_stream"
    ),
    "thought": "TreeOfThought",
    "devtools": (
        "LightEvaluator EvaluationCase EvaluationCaseResult EvaluationReport render_trace_page "
        "TraceRecorder"
    ),
    "swarm": "LightSwarm",
    "memory": (
        "MemoryPolicy MemoryProviderAdapter MemoryScope MemoryCandidate MemoryPromotionDecision "
        "SharedMemoryPool SharedMemoryRecord"
    ),
    "review": (
        "HumanApprovalHook HumanApprovalTool ApprovalRequest ApprovalDecision InMemoryReviewStore "
        "JsonReviewStore SqlReviewStore HumanFeedback record_feedback PolicyEngine PolicyHook "
        "SqlTokenLedger"
    ),
}
EXPORTS: dict[str, str] = {n: extra for extra, names in _NAMES.items() for n in names.split()}


def distribution(extra: str) -> str:
    """The distribution that ``lightagent-core[extra]`` installs."""
    return DISTRIBUTIONS.get(extra, f"lightagent-{extra}")
