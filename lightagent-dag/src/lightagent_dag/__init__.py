"""lightagent-dag: LightDAG — verified dynamic task graphs with leases and fencing, on one machine or many.

Names load on first use, so importing the package (as the plugin host does) stays cheap:
SQLAlchemy is imported only when a store is used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Public name -> module that defines it.
_EXPORTS: dict[str, str] = {
    "ArtifactManifest": "lightagent_dag.records",
    "ArtifactStore": "lightagent_dag.artifacts",
    "AssuranceLevel": "lightagent_dag.states",
    "AttemptRunner": "lightagent_dag.executor",
    "CallableVerifier": "lightagent_dag.verifiers",
    "CallableWorker": "lightagent_dag.workers",
    "Claim": "lightagent_dag.records",
    "ClaimRequest": "lightagent_dag.records",
    "DAGAttemptStatus": "lightagent_dag.states",
    "DAGConfig": "lightagent_dag.specs",
    "DAGError": "lightagent_dag.errors",
    "DAGEvent": "lightagent_dag.records",
    "DAGFencedError": "lightagent_dag.errors",
    "DAGLimitError": "lightagent_dag.errors",
    "DAGRun": "lightagent_dag.records",
    "DAGRunResult": "lightagent_dag.records",
    "DAGRunStatus": "lightagent_dag.states",
    "DAGTask": "lightagent_dag.records",
    "DAGTaskStatus": "lightagent_dag.states",
    "DAGWorker": "lightagent_dag.workers",
    "DAGWorkerProtocolError": "lightagent_dag.errors",
    "DAG_SCHEMA_VERSION": "lightagent_dag.specs",
    "DecompositionProposal": "lightagent_dag.specs",
    "LightAgentWorkerAdapter": "lightagent_dag.workers",
    "LightDAG": "lightagent_dag.dag",
    "LightDAGProvider": "lightagent_dag.provider",
    "LocalArtifactStore": "lightagent_dag.artifacts",
    "RegistryWorkerFactory": "lightagent_dag.workers",
    "SqlArtifactStore": "lightagent_dag.sql.blobs",
    "SqlTaskGraphStore": "lightagent_dag.sql",
    "SqliteTaskGraphStore": "lightagent_dag.sql",
    "TaskAttempt": "lightagent_dag.records",
    "TaskContext": "lightagent_dag.workers",
    "TaskGraphStore": "lightagent_dag.sql.store",
    "TaskOutcome": "lightagent_dag.specs",
    "TaskOutcomeKind": "lightagent_dag.states",
    "TaskSpec": "lightagent_dag.specs",
    "VerificationReport": "lightagent_dag.records",
    "VerificationRequest": "lightagent_dag.records",
    "VerificationVerdict": "lightagent_dag.states",
    "Verifier": "lightagent_dag.verifiers",
    "WorkerFactory": "lightagent_dag.workers",
    "dependency_closure": "lightagent_dag.graph",
    "normalize_task_outcome": "lightagent_dag.workers",
    "topological_order": "lightagent_dag.graph",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lightagent_dag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
