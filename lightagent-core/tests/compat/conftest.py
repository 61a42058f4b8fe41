"""Run a code block of the seeds (LightAgent 0.11's README and runtime guide) as written.

``seeds_block(code)`` changes only what issue 18 allows: each ``from LightAgent import ...``
becomes imports from where the names live now (``SEEDS_IMPORTS``, the table of
docs/migration.md), and the placeholders ``"your_api_key"`` / ``"your_base_url"`` point at
the loopback OpenAI-wire server (as do ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``, for blocks
that name no server). The block runs in a fresh namespace inside ``tmp_path``; a block with
top-level ``await`` (the runtime guide's async usage) runs on a new event loop.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

#: Where each name the seeds import from ``LightAgent`` lives in this project.
SEEDS_IMPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "LightAgent LightSwarm MemoryPolicy SharedMemoryPool HookDecision PolicyHook "
            "EvaluationCase HumanApprovalHook LightEvaluator safe_expression PermissionSet "
            "SecurityContext SqliteSessionStore BaseCapabilityProvider CapabilityRegistry "
            "CapabilitySpec PolicyDecision PolicyEngine"
        ).split(),
        "lightagent",
    ),
    **dict.fromkeys(("LightFlow", "JsonLightFlowStore"), "lightagent_flow"),
    **dict.fromkeys(
        (
            "CallableVerifier LightDAG LocalArtifactStore SqliteTaskGraphStore TaskOutcome TaskSpec"
        ).split(),
        "lightagent_dag",
    ),
    **dict.fromkeys(
        (
            "high_risk_parameter_guardrail output_redaction_guardrail privacy_input_guardrail "
            "sensitive_tool_confirmation_guardrail"
        ).split(),
        "lightagent_guardrails",
    ),
    **dict.fromkeys(("RetrievalDocument", "SqliteFTSRetrievalProvider"), "lightagent_rag_fts"),
}

API_KEY = "seeds-key"


def change_imports(code: str) -> str:
    """``code`` with each ``from LightAgent import ...`` moved to our modules (nothing else)."""
    tree = ast.parse(code)
    lines = code.splitlines()
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "LightAgent":
            by_module: dict[str, list[str]] = {}
            for alias in node.names:
                if alias.name not in SEEDS_IMPORTS:
                    raise AssertionError(f"no home for the seeds' name {alias.name!r}")
                spelled = alias.name + (f" as {alias.asname}" if alias.asname else "")
                by_module.setdefault(SEEDS_IMPORTS[alias.name], []).append(spelled)
            indent = lines[node.lineno - 1][: node.col_offset]
            text = "\n".join(
                f"{indent}from {module} import {', '.join(names)}"
                for module, names in by_module.items()
            )
            edits.append((node.lineno, node.end_lineno or node.lineno, text))
    for start, end, text in sorted(edits, reverse=True):
        lines[start - 1 : end] = text.splitlines()
    return "\n".join(lines) + "\n"


@pytest.fixture
def seeds_imports() -> dict[str, str]:
    """:data:`SEEDS_IMPORTS`: the seeds' name -> the module it is imported from now."""
    return dict(SEEDS_IMPORTS)


@pytest.fixture
def seeds_block(loopback_server, tmp_path, monkeypatch) -> Callable[..., dict[str, Any]]:
    """Run one seeds block (imports changed, model on the loopback server); its namespace."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", loopback_server.base_url)
    for name in ("LIGHTAGENT_API_KEY", "LIGHTAGENT_BASE_URL", "LIGHTAGENT_MODEL"):
        monkeypatch.delenv(name, raising=False)

    def run(code: str, name: str = "block", **namespace: Any) -> dict[str, Any]:
        source = change_imports(textwrap.dedent(code))
        source = source.replace('"your_api_key"', repr(API_KEY))
        source = source.replace('"your_base_url"', repr(loopback_server.base_url))
        compiled = compile(source, f"<seeds: {name}>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        ns: dict[str, Any] = {"__name__": f"seeds_{name}", **namespace}
        outcome = eval(compiled, ns)  # the seeds' own code, run as a user runs it
        if inspect.iscoroutine(outcome):
            asyncio.run(outcome)
        return ns

    return run
