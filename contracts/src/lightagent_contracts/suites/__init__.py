"""Contract test suites: base classes a provider's own test suite subclasses.

Each suite documents the factory fixture the subclass provides (``make_model``,
``tools``, ``make_toolset``, ``make_memory``, ``make_retrieval``, ``make_store``, ``make_artifact_store``,
``make_verifier``). Standard tests may be customised but never silently dropped (see
:class:`ContractSuite`). Names load lazily so importing one suite never imports another's
dependencies.
"""

from __future__ import annotations

import importlib
from typing import Any

_SUITES = {
    "ContractSuite": "lightagent_contracts.suites._guard",
    "DroppedContractTestError": "lightagent_contracts.suites._guard",
    "ModelContract": "lightagent_contracts.suites.model",
    "ToolProviderContract": "lightagent_contracts.suites.tool_provider",
    "ToolsetContract": "lightagent_contracts.suites.toolset",
    "MemoryContract": "lightagent_contracts.suites.memory",
    "RetrievalContract": "lightagent_contracts.suites.retrieval",
    "SessionStoreContract": "lightagent_contracts.suites.session_store",
    "TaskGraphStoreContract": "lightagent_contracts.suites.task_graph_store",
    "ArtifactStoreContract": "lightagent_contracts.suites.artifact_store",
    "VerifierContract": "lightagent_contracts.suites.verifier",
}

__all__ = sorted(_SUITES)


def __getattr__(name: str) -> Any:
    module = _SUITES.get(name)
    if module is None:
        raise AttributeError(f"module 'lightagent_contracts.suites' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)  # lightagent: allow LAV085


def __dir__() -> list[str]:
    return list(__all__)
