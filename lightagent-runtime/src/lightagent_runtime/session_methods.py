"""The inbox and goal methods of ``LightAgent`` (``agent.send_message``, ``agent.create_goal``
…): thin delegations to :mod:`lightagent_runtime.inbox` and :mod:`lightagent_runtime.goals`,
served on the agent by the ``runtime`` extension.

Like every session method, each names its ``session_id`` and acts for a caller —
``user_id`` (``"default_user"``, as in ``run()``) and the agent's tenant and project.
"""

from __future__ import annotations

from typing import Any

__all__ = ["InboxGoalMethods"]


class InboxGoalMethods:
    """Mixed into the agent's runtime part; ``agent`` is the ``LightAgent`` it serves."""

    agent: Any

    def send_message(
        self,
        session_id: str,
        text: str,
        *,
        message_id: str | None = None,
        message_type: str = "followup",
        metadata: dict[str, Any] | None = None,
        user_id: str = "default_user",
    ) -> dict[str, Any]:
        """Put ``text`` in the session's inbox (an ``inbox.enqueued`` event); returns its data.

        A run of the session — running now in any thread or process on the same store, or
        the next one — takes it in before its next model request, as a user message
        (an ``inbox.claimed`` event), exactly once. Idempotent by ``message_id``.
        """
        from lightagent.events.ownership import owner_of

        from lightagent_runtime.inbox import send_message

        self.agent._sessions(user_id)  # LA-CONFIG without a session store
        return send_message(
            self.agent.session_binding.store,
            session_id,
            text,
            message_id=message_id,
            message_type=message_type,
            metadata=metadata,
            owner=owner_of(self.agent, user_id),
        )

    @property
    def goal_checks(self) -> dict[str, Any]:
        """name -> ``check(answer) -> bool``: the callables of ``{"check": name}`` criteria.

        ``create_goal`` adds the callables it is given; an agent that restores a goal from
        the log (a new instance, another process) registers them here by the same name.
        """
        return self.__dict__.setdefault("_goal_checks", {})

    def create_goal(
        self,
        session_id: str,
        objective: str,
        *,
        acceptance_criteria: Any = (),
        goal_id: str | None = None,
        user_id: str = "default_user",
    ) -> dict[str, Any]:
        """Record an active goal of the session (a ``goal.created`` event); returns it.

        Every run of the session that ends well checks its answer against the criteria —
        text the answer must contain (case-insensitive), or a callable ``check(answer)`` —
        and records ``goal.completed`` (all met) or ``goal.updated`` (what is unmet); the
        outcomes are on the run's ``run_end`` event as ``goals``.
        """
        from lightagent.events.ownership import owner_of

        from lightagent_runtime.goals import create_goal, criterion_record

        self.agent._sessions(user_id)  # LA-CONFIG without a session store
        criteria = (
            [acceptance_criteria]
            if isinstance(acceptance_criteria, str)
            else list(acceptance_criteria)
        )
        goal = create_goal(
            self.agent.session_binding.store,
            session_id,
            objective,
            acceptance_criteria=criteria,
            goal_id=goal_id,
            owner=owner_of(self.agent, user_id),
        )
        for criterion in criteria:
            if callable(criterion):
                self.goal_checks[criterion_record(criterion)["check"]] = criterion
        return goal

    def session_goals(
        self, session_id: str, *, user_id: str = "default_user"
    ) -> list[dict[str, Any]]:
        """The session's open goals (not completed or cancelled), restored from its log."""
        from lightagent_runtime.goal_steps import open_goals

        return list(open_goals(self.agent._sessions(user_id).events(session_id)).values())
