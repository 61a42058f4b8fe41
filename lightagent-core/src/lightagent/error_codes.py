"""The table of stable ``LA-…`` error codes: code, family, message, one-line hint.

Codes are public and stable: add rows freely, never rename or reuse a code. Each row is
documented in ``docs/errors.md`` (a test fails when one is missing).

The rows below are the kernel's. A distribution adds its own codes through an entry point
of group ``lightagent.error_codes`` naming a tuple of rows of the same shape::

    [project.entry-points."lightagent.error_codes"]
    my-plugin = "my_plugin.error_codes:CODES"

:func:`plugin_codes` reads them once, on first need (``lightagent.errors`` asks only when
a code is not among the kernel's), so ``import lightagent`` loads no plugin.
"""

from __future__ import annotations

import threading

__all__ = ["CODES", "CODES_GROUP", "Row", "plugin_codes", "valid_row"]

#: One code: (code, family, message, hint).
Row = tuple[str, str, str, str]

#: The entry-point group through which a distribution registers its own codes.
CODES_GROUP = "lightagent.error_codes"

# fmt: off
CODES: tuple[Row, ...] = (
    # The seeds' provider codes (HTTP status of the model endpoint).
    ("LA-400", "model", "The model endpoint rejected the request.", "Check the model name, message shapes and tool schemas sent."),
    ("LA-401", "model", "The model endpoint refused the credentials.", "Set OPENAI_API_KEY or pass api_key=; check it belongs to base_url."),
    ("LA-403", "model", "The model endpoint denied access.", "Check the key's permissions for this model and region."),
    ("LA-404", "model", "The model or endpoint was not found.", "Check model= and base_url= (most servers end in /v1)."),
    ("LA-408", "model", "The model request timed out.", "Raise the timeout or retry; check the server is reachable."),
    ("LA-413", "model", "The request is too large for the model.", "Trim history, use filter_tools, or use a model with a larger context."),
    ("LA-429", "model", "The model endpoint is rate limiting.", "Lower concurrency or raise max_retry; Retry-After is honoured."),
    ("LA-500", "model", "The model endpoint failed.", "Retry later; the failure is on the provider side."),
    ("LA-503", "model", "The model endpoint is unavailable.", "Retry later or switch base_url to a healthy endpoint."),
    ("LA-PROVIDER", "model", "The model provider failed.", "Check the provider's logs and the request in the trace."),
    ("LA-TRUNCATED", "model", "The model stream ended without a finish.", "The connection dropped mid-answer; retry the run."),
    ("LA-MODEL-OUTPUT", "model", "The model output could not be used.", "Check the provider profile; the raw output is in details."),
    ("LA-JSON", "validation", "A value is not valid JSON.", "Send a JSON object that matches the schema."),
    ("LA-VALIDATION", "validation", "A value does not match its schema.", "Fix the fields named in details."),
    ("LA-CONFIG", "validation", "The configuration is invalid.", "Fix the argument named in the message."),
    ("LA-TOOL", "tool", "A tool call failed.", "Check the tool name and arguments; the error is in details."),
    ("LA-TOOL-NOT-FOUND", "tool", "The model called a tool that is not available.", "Register the tool or pass it with tools=."),
    ("LA-TOOL-ARGS", "tool", "The tool arguments do not match its schema.", "The model is told the schema error and may retry."),
    ("LA-TOOL-TIMEOUT", "tool", "The tool did not finish in time.", "Raise the tool's timeout or make it faster."),
    ("LA-TOOL-DEFINITION", "tool", "A tool definition is invalid.", "Run ToolRegistry.validate_tools() and fix what it lists."),
    ("LA-TOOLSET", "tool", "A toolset could not be opened, listed or closed.", "See the toolset's error in details; check its server or configuration."),
    ("LA-TOOLSET-CONFLICT", "tool", "Two toolsets offer a tool under the same name.", "Give the toolsets distinct namespaces (namespace=...)."),
    ("LA-SANDBOX", "policy", "Code execution is not allowed here.", "Use safe_expression or an isolated tool of your own."),
    ("LA-GUARDRAIL", "policy", "A guardrail blocked the request.", "See the guardrail's reason; change the input or the rule."),
    ("LA-HOOK", "policy", "A hook blocked the request.", "See the hook's reason in the trace."),
    ("LA-POLICY", "policy", "The policy denied the operation.", "Grant the capability or ask for approval."),
    ("LA-APPROVAL", "policy", "The operation needs or failed an approval.", "Resolve the pending approval request, then resume."),
    ("LA-APPROVAL-PENDING", "policy", "The operation waits for a human decision.", "Resolve the request named in details, then rerun with approval_id=."),
    ("LA-APPROVAL-TIMEOUT", "policy", "No reviewer decided in time.", "Raise the reviewer timeout or resolve the request later."),
    ("LA-SESSION-OWNER", "policy", "The session belongs to another user or tenant.", "Use a session id of this user; a session keeps the owner of its first run."),
    ("LA-MEMORY-TENANT", "policy", "The memory candidate belongs to another tenant.", "Promote it from an agent whose security_context names the candidate's tenant."),
    ("LA-PERMISSION-WIDEN", "policy", "A narrowing asked for more than the parent holds.", "A child context can only drop permissions; request what the parent has."),
    ("LA-HOOK-INVALID", "validation", "A hook or its result is invalid.", "Return None, True, False, a reason string, a dict or a HookDecision."),
    ("LA-HOOK-TIMEOUT", "policy", "A policy hook did not answer in time.", "Raise PolicyHook(timeout=) or make the handler faster."),
    ("LA-BUDGET", "budget", "A budget was exhausted.", "Raise the limit the message names (a timeout, max_tool_iterations, max_retry) or lower the work."),
    ("LA-MAX-ITERATIONS", "budget", "The tool loop reached max_tool_iterations.", "Raise max_tool_iterations or simplify the task."),
    ("LA-NO-PROGRESS", "budget", "The run stopped making progress (the same tool call and result again, or rounds with nothing new).", "Give the tool what it needs to return something new, or raise ProgressPolicy(max_repeated_tool_calls=)."),
    ("LA-CANCELLED", "budget", "The run was cancelled.", "A CancellationToken was triggered; start a new run, or agent.resume(run_id, session_id=...) to go on with it (needs a session_store)."),
    ("LA-SESSION", "storage", "The session store failed.", "The message names the cause (its code and text): fix that, then resume the run."),
    ("LA-STORAGE", "storage", "A store operation failed.", "Check the store path or URL and its permissions."),
    ("LA-RESUME-ACTIVE", "storage", "Another resume of the run is in progress.", "Wait for that resume, or pass lease_seconds=0 if it is known to have died."),
    ("LA-STORAGE-CONFLICT", "storage", "Another writer appended first.", "Reload the latest sequence and retry the append."),
    ("LA-STORAGE-CORRUPT", "storage", "Stored data is corrupt.", "Use the salvage path named in details; nothing was skipped."),
    ("LA-STORAGE-UNAVAILABLE", "storage", "The database is not reachable.", "Check the URL and that the server is running."),
    ("LA-STORAGE-NOT-FOUND", "storage", "No such store: its database, file or folder does not exist.", "Check the path or URL; reads never create a store, the first write does (in an existing folder)."),
    ("LA-MEMORY", "storage", "The memory backend failed or answered in a shape that cannot be read.", "retrieve() must return {\"results\": [{\"memory\": ...}]}; see details."),
    ("LA-MEMORY-CANDIDATE", "validation", "No such memory candidate.", "List them with agent.list_memory_candidates(session_id=...); one made in another process is found through its session."),
    ("LA-RETRIEVAL", "storage", "The retrieval provider failed.", "Check the provider's index and the filters passed; see details."),
    ("LA-PLUGIN", "plugin", "A plugin failed to load.", "Run `lightagent plugins` to see the failure; upgrade or disable it."),
    ("LA-PLUGIN-CONFLICT", "plugin", "Two plugins registered the same provider name.", "Uninstall or disable one of the two plugins named."),
    ("LA-PLUGIN-VERSION", "plugin", "A plugin does not support this lightagent-core.", "Upgrade the plugin or install a core version it admits."),
    ("LA-PROVIDER-NOT-FOUND", "plugin", "No provider is registered under that name.", "Install the plugin that provides it; `lightagent plugins` lists them."),
    ("LA-MISSING-EXTRA", "plugin", "An optional dependency is not installed.", "Install the extra named in the message."),
    # LightSwarm handoffs.
    ("LA-HANDOFF", "validation", "The handoff target is not a registered agent, or is the agent itself.", "Register the target with swarm.register_agent(...); an agent cannot hand off to itself."),
    ("LA-HANDOFF-CYCLE", "budget", "The handoff would return the conversation to an agent that already handled it.", "Answer with the current agent, or create LightSwarm(allow_cycles=True)."),
    ("LA-HANDOFF-LIMIT", "budget", "The handoff chain reached max_handoffs.", "Raise LightSwarm(max_handoffs=...) or give the agents clearer roles."),
    # Subagents (SubagentManager) and the runtime's goals.
    ("LA-SUBAGENT-DEPTH", "budget", "The subagent would be nested deeper than max_depth.", "Register it under a shallower parent, or raise SubagentManager(max_depth=...)."),
    ("LA-SUBAGENT-LIMIT", "budget", "The manager already holds max_agents subagents.", "Cancel a subagent you no longer need, or raise SubagentManager(max_agents=...)."),
    ("LA-SUBAGENT-UNKNOWN", "validation", "No subagent has that id, or its agent object is not registered in this process.", "manager.list() names the subagents; after a restart register the agent again with the same name."),
    ("LA-SUBAGENT-EXISTS", "validation", "A subagent of that id is registered under another parent.", "Give the agent another name, or register it under the parent it has."),
    ("LA-SUBAGENT-CLOSED", "validation", "The subagent was cancelled, or was not persistent and has run once.", "Register a new subagent, or register it with persistent=True to run it again."),
    ("LA-GOAL-UNKNOWN", "validation", "The session has no goal of that id.", "runtime.goals.list() names the session's goals."),
    ("LA-GOAL-STATE", "validation", "The goal cannot move to that status from the one it has.", "Completed and cancelled goals are closed; create a new goal instead."),
    # Skills and sandboxed code.
    ("LA-SKILL-NOT-FOUND", "validation", "No skill, or no file of the skill, has that name.", "list_skills names the skills; activate_skill lists a skill's files."),
    ("LA-SKILL-PATH", "policy", "The path is outside the skill's folder.", "Name a file inside the skill's references/, assets/ or scripts/ folder."),
    # The tool generator (agent.create_tool).
    ("LA-TOOLGEN-OUTPUT", "model", "The model's answer holds no tool source.", "Describe the tool more precisely, or use a model that follows code instructions."),
    ("LA-TOOLGEN-UNSAFE", "policy", "The generated tool's source was refused by the safety scan.", "See the findings in details; the source stays in quarantine and never ran."),
    ("LA-TOOLGEN-SCHEMA", "validation", "The generated source does not define one usable tool.", "One public function with a docstring and annotated parameters; see details."),
    ("LA-TOOLGEN-HASH", "policy", "The tool's file changed since it was reviewed.", "Review the file again: an approval covers only the exact bytes it was given for."),
    ("LA-TOOLGEN-REJECTED", "policy", "The reviewer rejected the generated tool.", "The source stays in quarantine; generate a new one or change the request."),
    ("LA-TOOLGEN-RUN", "tool", "The generated tool failed in its sandbox.", "It raised, timed out or printed no result; the message says which, details hold its stderr."),
    # Background jobs (the lightagent-runtime distribution).
    ("LA-JOB", "job", "A background job operation failed.", "See the message and details; JobManager.get(job_id) shows the job."),
    ("LA-JOB-NOT-FOUND", "job", "No job has that id in this session.", "Check the job id and the session id; await jobs.refresh() reads what other processes wrote."),
    ("LA-JOB-OPERATION", "job", "No operation is registered under the job's name here.", "Register it first: jobs.register(name, operation) (the same name in every worker that may take the job over)."),
    ("LA-JOB-FENCED", "job", "This worker's lease on the job was taken over: its write was refused.", "Nothing was written; the job continues under the newer lease holder."),
    ("LA-JOB-STATE", "job", "The job is not in a state that allows this.", "Check its status first: a finished job cannot run again, a live lease cannot be taken over."),
    ("LA-JOB-TIMEOUT", "job", "The job did not finish within the wait's timeout.", "Wait again (the job keeps running) or raise timeout=."),
    ("LA-UNKNOWN", "unknown", "An unexpected error occurred.", "See details; report it if it persists."),
)
# fmt: on


_lock = threading.Lock()
_plugin_rows: tuple[Row, ...] | None = None


def valid_row(row: object) -> bool:
    """Whether ``row`` is a code row: four non-empty strings, the first ``LA-…``."""
    return (
        isinstance(row, tuple)
        and len(row) == 4
        and all(isinstance(cell, str) and cell for cell in row)
        and str(row[0]).startswith("LA-")
    )


def plugin_codes() -> tuple[Row, ...]:
    """The rows every installed ``lightagent.error_codes`` entry point names (read once).

    Entry points are taken in name order. One that fails to load, or a row that is not a
    code row, is skipped: a code nobody registered reads as ``LA-UNKNOWN`` (with the
    original in ``details["original_code"]``), and never breaks the error being raised.
    A code the kernel or an earlier entry point already holds keeps its first row.
    """
    global _plugin_rows
    if _plugin_rows is None:
        with _lock:
            if _plugin_rows is None:
                _plugin_rows = _read_entry_points()
    return _plugin_rows


def _read_entry_points() -> tuple[Row, ...]:
    from lightagent.entry_points import loaded

    seen = {row[0] for row in CODES}
    rows: list[Row] = []
    for table in loaded(CODES_GROUP):  # a broken plugin is left out: the error still rises
        for row in table if isinstance(table, (tuple, list)) else ():
            if valid_row(row) and row[0] not in seen:
                seen.add(row[0])
                rows.append(row)
    return tuple(rows)
