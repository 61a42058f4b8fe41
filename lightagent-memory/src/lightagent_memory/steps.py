"""The memory extension's run step: it takes the loop's memory steps over.

Before the first request it retrieves the user's memories (and, with
``self_learning=True``, the agent's own, through the policy's ``filter_agent_results``)
and injects what the policy allows; after the run it writes the turn through the
policy, proposing internal writes (the learning note) as candidates
(:mod:`lightagent_memory.remember`). The loop asks for both through
``RunSpec.memory_steps``; the step also puts the run's policy on ``spec.memory_filter``
(``MemoryPolicy()`` when the agent has none: it fails closed).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lightagent.extensions import RunStep
from lightagent.run.recall import MEMORY_HEADER, inject, recall
from lightagent.run.spec import RunSpec
from lightagent.run.state import RunState

from lightagent_memory.candidates import CandidateBook
from lightagent_memory.remember import MemoryRun, agent_target, write_turn

__all__ = ["MemoryStep"]


class MemoryStep(RunStep):
    """One run's memory: its policy, its writes and fingerprints, the agent's candidates."""

    def __init__(self, spec: RunSpec, book: CandidateBook | None, self_learning: bool) -> None:
        if spec.memory_filter is None:  # no policy given: the default one, which fails closed
            from lightagent_memory.policy import MemoryPolicy

            spec.memory_filter = MemoryPolicy()
        spec.memory_steps = self
        self.run = MemoryRun(book, self_learning)

    def retrieve(
        self, spec: RunSpec, st: RunState, query: str, messages: list[dict[str, Any]]
    ) -> Generator[Any, Any, None]:
        """Retrieve the user's memories (and the agent's own with ``self_learning``), filter
        them, and inject what is allowed."""
        allowed = yield from recall(spec, st, query, seen=self._note_known)
        agent_filter = getattr(spec.memory_filter, "filter_agent_results", None)
        if self.run.self_learning and callable(agent_filter):
            ctx = spec.ctx

            def own_results(items: list[dict[str, Any]]) -> Any:
                return agent_filter(items, agent_name=ctx.agent_name, context=ctx)

            allowed = allowed + (
                yield from recall(
                    spec,
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

    def write(
        self, spec: RunSpec, st: RunState, data: Any, answer: str | None
    ) -> Generator[Any, Any, None]:
        """Write the turn to memory, through the write hooks and the policy."""
        yield from write_turn(spec, st, self.run, data, answer)

    def _note_known(self, spec: RunSpec, allowed: list[dict[str, Any]], target: str) -> None:
        """Remember what the backend already holds, so writing it again counts as a duplicate."""
        fingerprint = getattr(spec.memory_filter, "write_fingerprint", None)
        if (
            not allowed
            or not callable(fingerprint)
            or not getattr(spec.memory_filter, "reject_duplicate_writes", False)
        ):
            return
        known = self.run.fingerprints
        for item in allowed:
            known.add(fingerprint(item["memory"], {"memory_user_id": target}))
