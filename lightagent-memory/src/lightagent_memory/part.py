"""``LightAgent``'s memory backend, memory policy and memory candidates (the seeds'
promotion methods): the memory extension's part of one agent.
"""

from __future__ import annotations

import threading
from typing import Any

from lightagent.errors import ConfigurationError
from lightagent.extensions import ExtensionPart, RunStep

__all__ = ["MemoryPart", "memory_settings", "resolve_memory"]


def resolve_memory(spec: Any) -> Any:
    """The backend ``memory=`` names or is (``LA-CONFIG`` unless it has store and retrieve)."""
    from lightagent.providers import resolve_provider

    memory = resolve_provider("memory", spec, param="memory")
    if not (
        callable(getattr(memory, "store", None)) and callable(getattr(memory, "retrieve", None))
    ):
        raise ConfigurationError(
            "LA-CONFIG",
            f"memory= needs an object with store(data, user_id) and retrieve(query, user_id), "
            f"got {type(memory).__name__}",
            hint="See docs/memory.md for MemoryProtocol.",
        )
    return memory


def memory_settings(
    memory: Any, memory_policy: Any, memory_namespace: str | None, self_learning: bool
) -> tuple[Any, Any]:
    """(the agent's memory filter, its candidate book) from ``memory_policy=``,
    ``memory_namespace=`` and ``self_learning=`` (checked)."""
    policy = _policy(memory, memory_policy, memory_namespace, self_learning)
    if memory is None:
        return policy, None
    from lightagent_memory.candidates import CandidateBook

    return policy, CandidateBook()


def _policy(
    memory: Any, memory_policy: Any, memory_namespace: str | None, self_learning: bool
) -> Any:
    if memory is None and (
        memory_policy is not None or memory_namespace is not None or self_learning
    ):
        given = "memory_policy=" if memory_policy is not None else "memory_namespace="
        if self_learning:
            given = "self_learning=True"
        raise ConfigurationError(
            "LA-CONFIG",
            f"LightAgent({given}) needs memory=",
            hint='Pass memory= as well (a backend, or a name such as "in-memory").',
        )
    if memory_policy is not None and not (
        callable(getattr(memory_policy, "filter_results", None))
        and callable(getattr(memory_policy, "admit_write", None))
    ):
        raise ConfigurationError(
            "LA-CONFIG",
            f"memory_policy= needs a MemoryPolicy (filter_results and admit_write), "
            f"got {type(memory_policy).__name__}",
            hint="Pass lightagent.MemoryPolicy(...); see docs/memory.md.",
        )
    if memory_namespace is None:
        return memory_policy
    from lightagent_memory.policy import MemoryPolicy

    if memory_policy is None:
        return MemoryPolicy(namespace=memory_namespace)
    current = getattr(memory_policy, "namespace", None)
    if current not in (None, memory_namespace):
        raise ConfigurationError(
            "LA-CONFIG",
            f"memory_namespace={memory_namespace!r} differs from the policy's namespace {current!r}",
            hint="Give the namespace once: in MemoryPolicy(namespace=...) or memory_namespace=.",
        )
    if current is None:
        with_namespace = getattr(memory_policy, "with_namespace", None)
        if not callable(with_namespace):
            raise ConfigurationError(
                "LA-CONFIG",
                f"memory_namespace= cannot be applied to a {type(memory_policy).__name__}",
                hint="Set the namespace on the policy itself.",
            )
        return with_namespace(memory_namespace)
    return memory_policy


class MemoryPart(ExtensionPart):
    """One agent's memory backend, policy, candidates and self-learning.

    The backend is ``agent.memory`` (resolved from ``memory=``: an object at construction,
    a provider name at first use). The policy is ``agent.memory_filter``, set from
    ``memory_policy=`` / ``memory_namespace=`` or by assigning it (None: ``MemoryPolicy()``,
    which fails closed). Each run of an agent with memory gets a
    :class:`~lightagent_memory.steps.MemoryStep`.
    """

    #: ``agent.memory_filter`` until one is given (an agent attribute, once set).
    memory_filter: Any = None

    def __init__(self, agent: Any, memory: Any, book: Any, self_learning: bool) -> None:
        from lightagent.providers import provider_reference

        self.agent = agent
        self._memory_spec = memory
        self._memory: Any = None
        if memory is not None and provider_reference(memory) is None:
            self._memory = resolve_memory(memory)
        self._lock = threading.Lock()
        self._memory_book = book
        self.self_learning = self_learning

    @property
    def memory(self) -> Any:
        """The memory backend (resolved from ``memory=`` on first use), or None."""
        if self._memory is None and self._memory_spec is not None:
            with self._lock:
                if self._memory is None:
                    self._memory = resolve_memory(self._memory_spec)
        return self._memory

    def run_step(self, spec: Any, options: Any) -> RunStep | None:
        """This run's memory step (None without memory); a provider name that resolves to
        no backend fails the run here, typed, before it starts."""
        if self._memory_spec is None:
            return None
        from lightagent_memory.steps import MemoryStep

        memory = self.memory
        return MemoryStep(memory, self.agent.memory_filter, self._memory_book, self.self_learning)

    @property
    def memory_policy(self) -> Any:
        """The ``MemoryPolicy`` runs use (None: the default ``MemoryPolicy()``, which fails closed)."""
        return self.agent.memory_filter

    def list_memory_candidates(
        self,
        *,
        include_data: bool = True,
        session_id: str | None = None,
        status: str | None = "candidate",
    ) -> list[dict[str, Any]]:
        """Memory candidates waiting for promotion (``status=None``: decided ones too).

        Without ``session_id``, those this agent made in this process; with it, those the
        session's log holds (from any process). This is a reviewer's view: it reads the log
        whoever the session belongs to (``get_session`` is the owner's), but only candidates
        of the agent's own tenant.
        """
        if session_id is not None:
            from lightagent.events.store import validate_session_id

            from lightagent_memory.promotion import session_candidates

            binding = self._binding_or_refuse()
            events = list(binding.store.events(validate_session_id(session_id)))
            candidates = session_candidates(events)
        else:
            candidates = self._memory_book.list() if self._memory_book is not None else []
        tenant = self._tenant()
        return [
            c.to_dict(include_data=include_data)
            for c in candidates
            if (status is None or c.status == status) and c.tenant_id == tenant
        ]

    def promote_memory_candidate(
        self,
        candidate_id: str,
        decision: Any = None,
        *,
        session_id: str | None = None,
        reviewer_id: str | None = None,
    ) -> Any:
        """Decide a candidate: ``decision`` (approve/reject/rewrite/keep, ``True``/``False``, a
        ``MemoryPromotionDecision``) or, without one, the hooks and the policy.

        A final decision is recorded once in the candidate's session log, even when several
        processes promote it at the same time; the promoted memory is then written. Returns
        the ``MemoryPromotionDecision`` in force (``metadata["idempotent"]`` when it was
        decided before).
        """
        from lightagent_memory.promotion import drive_sync

        return drive_sync(self._promotion(candidate_id, decision, session_id, reviewer_id))

    async def apromote_memory_candidate(
        self,
        candidate_id: str,
        decision: Any = None,
        *,
        session_id: str | None = None,
        reviewer_id: str | None = None,
    ) -> Any:
        """Async :meth:`promote_memory_candidate`."""
        from lightagent_memory.promotion import drive_async

        return await drive_async(self._promotion(candidate_id, decision, session_id, reviewer_id))

    # -- internals --------------------------------------------------------------------
    def _tenant(self) -> str | None:
        """The tenant of the agent's security context: candidates of others are not its to see."""
        from lightagent_memory.scope import run_tenant

        return run_tenant(getattr(self.agent.interceptor, "security_context", None))

    def _binding_or_refuse(self) -> Any:
        binding = getattr(self.agent, "session_binding", None)
        if binding is None:
            raise ConfigurationError(
                "LA-CONFIG",
                "session_id= needs an agent with a session store",
                hint='Pass session_store= (e.g. "sqlite:///sessions.db").',
            )
        return binding

    def _promotion(
        self, candidate_id: str, decision: Any, session_id: str | None, reviewer_id: str | None
    ) -> Any:
        from lightagent.interceptors import global_observers

        from lightagent_memory.promotion import PromotionJob

        memory = self.memory
        if memory is None:
            raise ConfigurationError(
                "LA-CONFIG",
                "this agent has no memory= to promote candidates into",
                hint="Pass memory= to LightAgent.",
            )
        if not isinstance(candidate_id, str) or not candidate_id:
            raise ConfigurationError("LA-CONFIG", "candidate_id must be a non-empty str")
        binding = getattr(self.agent, "session_binding", None)
        policy = self.agent.memory_filter
        if policy is None:
            from lightagent_memory.policy import MemoryPolicy

            policy = MemoryPolicy()
        run_interceptor = getattr(self.agent, "_run_interceptor", None)
        return PromotionJob(
            agent_name=self.agent.name,
            book=self._memory_book,
            policy=policy,
            memory=memory,
            candidate_id=candidate_id,
            decision=_requested(decision),
            session_id=session_id,
            store=binding.store if binding is not None else None,
            interceptor=run_interceptor() if callable(run_interceptor) else self.agent.interceptor,
            observers=[*getattr(self.agent, "_observers", ()), *global_observers()],
            reviewer_id=reviewer_id,
            tenant_id=self._tenant(),
        )


def _requested(decision: Any) -> Any:
    """A caller's decision, checked: a string must name an action (never read as a reason)."""
    from lightagent_memory.candidates import MemoryPromotionDecision, coerce_decision

    if decision is None:
        return None
    if isinstance(decision, str):
        return MemoryPromotionDecision(decision)
    return coerce_decision(decision)
