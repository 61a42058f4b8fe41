"""lightagent-dbos: durable lightagent runs on DBOS Transact.

``DBOSAgent(agent, name=...)`` runs a ``LightAgent`` as a DBOS workflow whose steps are
the loop's effects (model requests, tool calls, memory and retrieval), so a run that a
crash interrupted is finished by the next process that launches DBOS, each finished
step taken from its checkpoint. ``DBOSFlowExecutor(name=...)``, given to
``LightFlow(executor=...)``, does the same for a flow: each execution a workflow, each
step a step; ``DBOSJobExecutor(name=...)``, given to a runtime ``JobManager(executor=...)``,
for background jobs: each job a workflow, each ledger step a step. See docs/dbos.md.

``import lightagent_dbos`` stays cheap (the plugin host imports it to list it): DBOS and
its database drivers are imported when a name below is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lightagent.lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from lightagent_dbos.agent import DURABLE_OPTIONS, DBOSAgent
    from lightagent_dbos.driver import APPROVAL_EVENT, approval_topic
    from lightagent_dbos.flow import DBOSFlowExecutor
    from lightagent_dbos.jobs import DBOSJobExecutor

_EXPORTS: dict[str, str] = {
    "APPROVAL_EVENT": "lightagent_dbos.driver",
    "DBOSAgent": "lightagent_dbos.agent",
    "DBOSFlowExecutor": "lightagent_dbos.flow",
    "DBOSJobExecutor": "lightagent_dbos.jobs",
    "DURABLE_OPTIONS": "lightagent_dbos.agent",
    "approval_topic": "lightagent_dbos.driver",
}

__all__ = [
    "APPROVAL_EVENT",
    "DURABLE_OPTIONS",
    "DBOSAgent",
    "DBOSFlowExecutor",
    "DBOSJobExecutor",
    "__version__",
    "approval_topic",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
