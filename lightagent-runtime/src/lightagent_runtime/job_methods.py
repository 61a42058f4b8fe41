"""The background-job methods of ``LightAgent`` (``agent.start_job`` …): thin delegations to
:mod:`lightagent_runtime.jobs`, served on the agent by the ``runtime`` extension.

``agent.job_manager(session_id)`` is the session's :class:`~lightagent_runtime.jobs.JobManager`
with this agent's runs registered as an operation (``agent:<name>``), so a worker built
with the same agent (the same ``name=``) can take an interrupted run over.
"""

from __future__ import annotations

from typing import Any

from lightagent.errors import ConfigurationError

__all__ = ["JobMethods"]


class JobMethods:
    """Mixed into the agent's runtime part; ``agent`` is the ``LightAgent`` it serves."""

    agent: Any

    def job_manager(
        self,
        session_id: str,
        *,
        user_id: str = "default_user",
        reconcile: Any = None,
        approve: Any = None,
        **options: Any,
    ) -> Any:
        """The session's ``JobManager`` (one per session and user), with this agent's runs
        registered; ``reconcile``/``approve`` settle, on takeover, a tool call whose outcome
        is unknown; ``options`` go to ``JobManager`` (``worker_id``, ``poll_interval`` …).
        ``executor=`` (e.g. ``DBOSJobExecutor``) makes a manager whose jobs it runs; the
        session's later calls without options get that manager again."""
        from lightagent.events.ownership import owner_of

        from lightagent_runtime.jobs.agent_run import agent_job_name, agent_operation
        from lightagent_runtime.jobs.manager import JobManager

        cache: dict[tuple[str, str], Any] = self.__dict__.setdefault("_job_managers", {})
        agent = self.agent
        manager = cache.get((session_id, user_id))
        executor = options.get("executor")
        if executor is None:
            options.pop("executor", None)
        elif manager is not None and manager.executor is executor and len(options) == 1:
            options.pop("executor")  # the manager this executor already has
        if manager is None or options or reconcile is not None or approve is not None:
            binding = agent.session_binding
            if binding is None:
                raise ConfigurationError(
                    "LA-CONFIG",
                    "background jobs need a session store (they live in the session log)",
                    hint='Pass session_store= (e.g. SqliteSessionStore("sessions.sqlite3")).',
                )
            manager = JobManager(
                binding.store, session_id, owner=owner_of(agent, user_id), **options
            )
            operation = agent_operation(agent, reconcile=reconcile, approve=approve)
            manager.register(agent_job_name(agent), operation)
            cache[(session_id, user_id)] = manager
        return manager

    def start_job(
        self,
        query: str,
        *,
        session_id: str,
        idempotency_key: str | None = None,
        lease_seconds: float | None = None,
        metadata: dict[str, Any] | None = None,
        executor: Any = None,
        **run_kwargs: Any,
    ) -> Any:
        """Run ``query`` as a background job of the session (on the running event loop).

        Returns the job's ``JobRecord`` at once; ``await agent.job_manager(session_id)
        .wait(job_id)`` gives its end (``result["content"]`` is the answer). The run options
        it records are JSON values (``user_id``, ``metadata``, ``max_tool_iterations`` …).
        ``executor=`` runs the job on it (as ``job_manager(session_id, executor=...)``).
        """
        from lightagent_runtime.jobs.agent_run import agent_job_name, run_arguments

        user_id = run_kwargs.get("user_id", "default_user")
        jobs = self.job_manager(session_id, user_id=user_id, executor=executor)
        return jobs.start(
            agent_job_name(self.agent),
            owner_agent_id=self.agent.name,
            arguments=run_arguments(query, session_id, run_kwargs),
            idempotency_key=idempotency_key,
            lease_seconds=lease_seconds,
            metadata=metadata,
        )

    def run_detachable(self, query: str, **kwargs: Any) -> Any:
        """:meth:`arun_detachable` for sync callers: the run is a job on the process's
        background event loop (:func:`lightagent.bridge.run_sync`), so after a detach it
        carries on there; if the process exits first, the job is interrupted and taken
        over from the log like any other."""
        from lightagent.bridge import run_sync

        return run_sync(self.arun_detachable(query, **kwargs))

    async def arun_detachable(
        self,
        query: str,
        *,
        session_id: str,
        cancellation_token: Any,
        result_format: str = "str",
        lease_seconds: float | None = None,
        metadata: dict[str, Any] | None = None,
        **run_kwargs: Any,
    ) -> Any:
        """Run ``query`` and wait for it — unless ``cancellation_token.detach()`` is called.

        The run is a background job from the start, so a detach only stops the waiting:
        this returns at once a result whose error is ``LA-CANCELLED`` with
        ``details["mode"] == "detach"`` and ``details["job_id"]``, and the run carries on;
        its end is awaited like any job's, and after a crash it is taken over from the log.
        ``cancel`` and ``stop_after_turn`` on the token work as in ``arun`` while attached.
        """
        from lightagent.cancellation import CancellationToken

        from lightagent_runtime.jobs.agent_run import agent_job_name, run_arguments, run_detachable

        if not isinstance(cancellation_token, CancellationToken):
            raise ConfigurationError(
                "LA-CONFIG",
                "arun_detachable() needs cancellation_token=CancellationToken()",
                hint="Detach through the token: token.detach() from another task or thread.",
            )
        if result_format not in ("str", "object", "dict"):
            raise ConfigurationError(
                "LA-CONFIG",
                f"result_format must be 'str', 'object' or 'dict', not {result_format!r}",
            )
        user_id = run_kwargs.get("user_id", "default_user")
        jobs = self.job_manager(session_id, user_id=user_id)
        result, _job = await run_detachable(
            jobs,
            agent_job_name(self.agent),
            run_arguments(query, session_id, run_kwargs),
            cancellation_token,
            lease_seconds=lease_seconds,
            metadata=metadata,
            owner_agent_id=self.agent.name,
        )
        if result_format == "object":
            return result
        if result_format == "dict":
            return result.to_dict()
        return result.content if result.content is not None else ""
