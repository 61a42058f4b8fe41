"""``RunOptions``: the options of one run, defined once for every entry point.

``LightAgent.run``, ``arun``, ``astream``, ``resume`` and ``aresume`` take them as
keywords (the seeds' spelling: ``agent.run(q, user_id="u", trace=True)``) or as one
typed object (``agent.run(q, options=RunOptions(trace=True))``; keywords given as well
override its fields). LightFlow builds one for each step agent. An unknown keyword is
``LA-CONFIG`` naming the closest option, never a bare ``TypeError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RUN_OPTION_NAMES", "RunOptions"]


@dataclass(slots=True, kw_only=True)
class RunOptions:
    """What one run may be told besides its query (``docs/agent.md`` explains each)."""

    #: Extra function tools for this run only (toolsets belong to the agent).
    tools: Iterable[Any] | None = None
    #: Return an iterator of chunks (``run``/``arun``); ``astream`` always streams.
    stream: bool = False
    #: Model attempts per request (and the default of ``max_tool_iterations``).
    max_retry: int = 10
    #: Tool rounds before the run stops with ``LA-BUDGET`` (default: ``max_retry``).
    max_tool_iterations: int | None = None
    user_id: str = "default_user"
    #: OpenAI chat messages that come before the query (a session loads its own).
    history: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None
    #: ``str``, ``object`` or ``dict``; with streaming ``str`` or ``event``.
    result_format: str = "str"
    #: Keep the run's events in ``RunResult.trace``.
    trace: bool = False
    parent_trace_id: str | None = None
    run_group_id: str | None = None
    #: Record the run in the agent's session store under this id.
    session_id: str | None = None
    cancellation_token: Any = None
    #: Tool calls get idempotency keys derived from it (the same on a retry or resume).
    idempotency_key: str | None = None
    #: A pydantic model, dataclass or TypedDict the answer must fit.
    output_schema: type | None = None
    #: A resolved approval request for a call this run repeats.
    approval_id: str | None = None
    #: Extra request body parameters for the model (temperature, max_tokens …).
    model_options: dict[str, Any] | None = None
    #: Options an installed capability claims (``lightagent.extensions``): name -> value.
    #: Given as keywords they land here (``run(q, light_swarm=swarm)``).
    extensions: Mapping[str, Any] | None = None

    @classmethod
    def of(
        cls,
        options: RunOptions | None = None,
        overrides: Mapping[str, Any] | None = None,
        *,
        where: str = "run()",
    ) -> RunOptions:
        """``options`` with ``overrides`` applied (a new object; ``options`` is not changed)."""
        if options is not None and not isinstance(options, RunOptions):
            from lightagent.errors import ConfigurationError

            raise ConfigurationError(
                "LA-CONFIG",
                f"options= must be a RunOptions, got {type(options).__name__}",
                hint="Pass options=RunOptions(...), or the options as keywords.",
            )
        try:
            if options is None:
                return cls(**overrides) if overrides else cls()
            return dataclasses.replace(options, **overrides) if overrides else options
        except TypeError:
            unknown = set(overrides or ()) - set(RUN_OPTION_NAMES)
            if not unknown:
                raise
        # names the dataclass lacks: an installed capability's options, else a typo
        from lightagent.extensions import claim

        assert overrides is not None
        claimed, rest = claim({k: overrides[k] for k in unknown}, "run_options")
        if rest:
            from lightagent.extensions import claimable
            from lightagent.run.options import refuse_unknown

            refuse_unknown(where, rest, [*RUN_OPTION_NAMES, *claimable("run_options")])
        known = {k: v for k, v in overrides.items() if k not in unknown}
        base = options if options is not None else cls()
        extensions = dict(base.extensions or {})
        for values in claimed.values():
            extensions.update(values)
        return dataclasses.replace(base, **known, extensions=extensions or None)

    def replace(self, **changes: Any) -> RunOptions:
        """A copy with ``changes`` (unknown names are ``LA-CONFIG``)."""
        return RunOptions.of(self, changes)

    def to_dict(self) -> dict[str, Any]:
        """Every option and its value (a capability's options as keywords of their own)."""
        out = {name: getattr(self, name) for name in RUN_OPTION_NAMES if name != "extensions"}
        out.update(self.extensions or {})
        return out


#: The option names, in declaration order.
RUN_OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RunOptions))
