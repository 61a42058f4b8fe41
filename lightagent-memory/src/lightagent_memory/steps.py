"""The memory extension's run step: memory before the first request and after the run.

When the run's query has joined the prompt (``recall``) it retrieves the user's memories
(and, with ``self_learning=True``, the agent's own, through the policy's
``filter_agent_results``) and injects what the policy allows; when the run has answered
(``finish``) it writes the turn through the policy, proposing internal writes (the
learning note) as candidates (:mod:`lightagent_memory.remember`). Its ``order`` puts the
write before the other capabilities' ``finish``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.extensions import RunStep
from lightagent.run.recall import inject
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState

from lightagent_memory.candidates import CandidateBook
from lightagent_memory.recall import MEMORY_HEADER, recall
from lightagent_memory.remember import MemoryRun, agent_target, write_turn

__all__ = ["MemoryStep"]


class MemoryStep(RunStep):
    """One run's memory: its backend and policy, its writes and fingerprints, the agent's
    candidates."""

    #: Before the other steps: the turn is written before their ``finish`` (goals …) runs.
    order = -50

    def __init__(
        self, memory: Any, policy: Any, book: CandidateBook | None, self_learning: bool
    ) -> None:
        if policy is None:  # no policy given: the default one, which fails closed
            from lightagent_memory.policy import MemoryPolicy

            policy = MemoryPolicy()
        self.run = MemoryRun(memory, policy, book, self_learning)
        #: The query as the run admitted it (None until it joined the prompt).
        self.query: str | None = None

    def recall(
        self, spec: RunSpec, st: RunState, query: str, messages: list[dict[str, Any]]
    ) -> Generator[Any, Any, None]:
        """Retrieve the user's memories (and the agent's own with ``self_learning``), filter
        them, and inject what is allowed."""
        self.query = query
        run = self.run
        allowed = yield from recall(spec, run, st, query, seen=self._note_known)
        agent_filter = getattr(run.policy, "filter_agent_results", None)
        if run.self_learning and callable(agent_filter):
            ctx = spec.ctx

            def own_results(items: list[dict[str, Any]]) -> Any:
                return agent_filter(items, agent_name=ctx.agent_name, context=ctx)

            allowed = allowed + (
                yield from recall(
                    spec,
                    run,
                    st,
                    query,
                    scope="agent",
                    target=agent_target,
                    results_filter=own_results,
                    seen=self._note_known,
                )
            )
        if allowed:
            lines = "\n".join(f"- {m['memory']}" for m in allowed)
            inject(messages, f"{MEMORY_HEADER}\n{lines}")

    def finish(self, spec: RunSpec, st: RunState, content: str | None) -> Generator[Any, Any, None]:
        """Write the turn to memory, through the write hooks and the policy."""
        if self.query is not None:
            yield from write_turn(spec, st, self.run, self.query, content)

    def _note_known(self, spec: RunSpec, allowed: list[dict[str, Any]], target: str) -> None:
        """Remember what the backend already holds, so writing it again counts as a duplicate."""
        policy = self.run.policy
        fingerprint = getattr(policy, "write_fingerprint", None)
        if (
            not allowed
            or not callable(fingerprint)
            or not getattr(policy, "reject_duplicate_writes", False)
        ):
            return
        known = self.run.fingerprints
        for item in allowed:
            known.add(fingerprint(item["memory"], {"memory_user_id": target}))
