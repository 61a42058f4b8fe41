"""The attribute names this instrumentation writes.

``gen_ai.*`` follow the OpenTelemetry GenAI semantic conventions (Development status;
the names of semconv 1.37, the version :data:`SCHEMA_URL` names). ``lightagent.*``
carry the framework's own identifiers so a span can be matched to the event log.
"""

from __future__ import annotations

__all__ = ["SCHEMA_URL"]

SCHEMA_URL = "https://opentelemetry.io/schemas/1.37.0"

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
WORKFLOW_NAME = "gen_ai.workflow.name"
ERROR_TYPE = "error.type"

RUN_ID = "lightagent.run_id"
TRACE_ID = "lightagent.trace_id"
PARENT_TRACE_ID = "lightagent.parent_trace_id"
RUN_GROUP_ID = "lightagent.run_group_id"
REQUEST_INDEX = "lightagent.request_index"
ATTEMPTS = "lightagent.attempts"
TOOL_LATENCY_MS = "lightagent.tool.latency_ms"
FLOW_RUN_ID = "lightagent.flow.run_id"
FLOW_STEP = "lightagent.flow.step"
FLOW_STATUS = "lightagent.flow.status"
DAG_RUN_ID = "lightagent.dag.run_id"
DAG_TASK_ID = "lightagent.dag.task_id"
DAG_ATTEMPT_ID = "lightagent.dag.attempt_id"
DAG_WORKER_KEY = "lightagent.dag.worker_key"
DAG_OUTCOME = "lightagent.dag.outcome"
DAG_STATUS = "lightagent.dag.status"
