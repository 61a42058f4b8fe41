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
KEYWORDS: dict[str, tuple[str, object]] = {}

#: ``run(...)`` option -> (extra, the value that means "not used").
RUN_OPTIONS: dict[str, tuple[str, object]] = {}

#: ``agent.<name>`` attribute or method -> extra.
ATTRIBUTES: dict[str, str] = {
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
}


def distribution(extra: str) -> str:
    """The distribution that ``lightagent-core[extra]`` installs."""
    return DISTRIBUTIONS.get(extra, f"lightagent-{extra}")
