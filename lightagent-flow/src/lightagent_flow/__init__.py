"""lightagent-flow: LightFlow, deterministic, durable, resumable multi-step agent workflows.

```python
from lightagent_flow import JsonLightFlowStore, LightFlow

flow = (
    LightFlow(store=JsonLightFlowStore(".lightflow_runs"))
    .step("research", agent=research_agent, timeout=30)
    .step("write", agent=writer_agent, depends_on=["research"], max_retry=2)
)
result = flow.run("Analyze this company", run_id="report-001")
```
"""

from __future__ import annotations

from lightagent_flow.executors import FlowExecutor
from lightagent_flow.flow import LightFlow
from lightagent_flow.provider import WorkflowProviderAdapter
from lightagent_flow.results import (
    RUN_STATES,
    STEP_STATES,
    LightFlowResult,
    LightFlowStepResult,
    LightFlowSteps,
)
from lightagent_flow.step import LightFlowStep
from lightagent_flow.stores import (
    JsonLightFlowStore,
    LightFlowStore,
    MemoryLightFlowStore,
    SqlLightFlowStore,
)

__version__ = "0.1.0"
__all__ = [
    "RUN_STATES",
    "STEP_STATES",
    "FlowExecutor",
    "JsonLightFlowStore",
    "LightFlow",
    "LightFlowResult",
    "LightFlowStep",
    "LightFlowStepResult",
    "LightFlowSteps",
    "LightFlowStore",
    "MemoryLightFlowStore",
    "SqlLightFlowStore",
    "WorkflowProviderAdapter",
    "__version__",
]
