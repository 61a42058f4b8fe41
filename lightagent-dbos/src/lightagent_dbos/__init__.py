"""lightagent-dbos: durable lightagent runs on DBOS Transact.

``DBOSAgent(agent, name=...)`` runs a ``LightAgent`` as a DBOS workflow whose steps are
the loop's effects (model requests, tool calls, memory and retrieval), so a run that a
crash interrupted is finished by the next process that launches DBOS, each finished
step taken from its checkpoint. See docs/dbos.md.
"""

from __future__ import annotations

from lightagent_dbos.agent import DURABLE_OPTIONS, DBOSAgent
from lightagent_dbos.driver import APPROVAL_EVENT, approval_topic

__version__ = "0.1.0"

__all__ = ["APPROVAL_EVENT", "DURABLE_OPTIONS", "DBOSAgent", "__version__", "approval_topic"]
