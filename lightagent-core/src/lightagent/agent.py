"""``LightAgent``: one agent, any number of concurrent runs.

The agent holds configuration only (model, tools, instructions, interceptor, session
store). Each ``run``/``arun``/``astream`` builds its own :class:`~lightagent.run.spec.RunSpec`
and :class:`~lightagent.interceptors.RunContext` and drives the one loop
(:func:`lightagent.loop.run_machine`) with the sync or the async driver.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterable, Iterator, Mapping
from typing import Any, Literal, cast, overload

from lightagent.agent_compat import CompatMethods, compat_observers
from lightagent.agent_log import QueuedFileHandler, adrain, drain
from lightagent.agent_sessions import SessionMethods
from lightagent.agent_toolsets import ToolsetMethods
from lightagent.errors import ConfigurationError
from lightagent.models.adapt import as_model, is_model
from lightagent.results import RunResult, StreamEvent
from lightagent.run.failure_log import log_failure
from lightagent.run.options import (
    UNAVAILABLE,
    check_unavailable,
    refuse_unknown,
    resolve_model,
    resolve_store,
    resolve_tool,
)
from lightagent.run.prepare import build_spec
from lightagent.run.run_options import RunOptions
from lightagent.run.spec import RunSpec
from lightagent.toolsets.protocol import is_toolset

__all__ = ["LightAgent"]


class LightAgent(
    SessionMethods,
    ToolsetMethods,
    CompatMethods,
):
    """An LLM agent with tools (the seeds' constructor; every argument is keyword-only).

    ``model`` is a model name (an :class:`~lightagent.models.openai_compat.OpenAIModel`
    is made from it, through the plugin registry's ``"openai"`` model provider, or the
    one named by ``provider=``), ``("provider", {configuration})``, or any object
    following the ``Model`` protocol (e.g. ``ScriptedModel``). ``tools`` takes functions
    and toolsets. A capability's keywords (``memory=``, ``retrieval=`` …) are its
    distribution's. Construction has no side effects: no files, no network, no plugin scan
    for the kernel's own keywords; providers are resolved on first use.
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        instructions: str | None = None,
        role: str | None = None,
        model: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str | None = None,
        tools: Iterable[Any] | None = None,
        filter_tools: bool = True,
        session_store: Any = None,
        observers: Iterable[Any] | None = None,
        max_tool_workers: int | None = None,
        tool_timeout: float | None = 60.0,
        debug: bool = False,
        log_level: str = "INFO",
        log_file: str | None = None,
        tracetools: Any = None,
        **unknown: Any,
    ) -> None:
        claimed: dict[str, dict[str, Any]] = {}
        if unknown:  # an installed capability's keywords; then a typo is a typed error naming it
            unknown = check_unavailable(unknown)
            if unknown:
                from lightagent.extensions import claim

                claimed, unknown = claim(unknown, "keywords")
            if unknown:
                from lightagent.extensions import claimable

                known = [*_init_parameters(), *UNAVAILABLE, *claimable("keywords")]
                refuse_unknown("LightAgent()", unknown, known)
        if model is not None and not isinstance(model, (str, tuple, dict)) and not is_model(model):
            raise ConfigurationError(
                "LA-CONFIG",
                f"model= must be a model name or an object with acomplete() or complete(), got {type(model).__name__}",
                hint='Pass model="gpt-4o-mini" (with api_key=/base_url=) or a Model object such as ScriptedModel.',
            )
        self.name: str = name or f"LightAgent{random.randint(10_000_000, 99_999_999)}"
        self.instructions: str = instructions or "You are a helpful agent."
        self.role: str | None = role
        self.api_key = api_key
        self.base_url = base_url
        self.provider = provider
        self.filter_tools = bool(filter_tools)
        self.debug = debug
        self._model_spec = model
        self._model: Any = (
            None if model is None or isinstance(model, (str, tuple, dict)) else as_model(model)
        )
        self._client: Any = None
        self._lock = threading.Lock()
        self._system_prompt = self.instructions if not role else f"{self.instructions}\n{role}"
        self._observers = list(observers or ())
        self._tool_timeout = tool_timeout
        self._max_tool_workers = max_tool_workers
        self._last_trace: list[dict[str, Any]] = []
        self._last_session: tuple[str | None, str] | None = None
        self.logger = _logger(self.name, log_level, log_file, debug)
        self._observers.extend(compat_observers(tracetools, self.logger, log_file, debug))

        from lightagent.tools.registry import ToolRegistry

        self.tools = ToolRegistry()
        self._toolsets: Any = None
        if tools:
            functions = []
            for item in tools:
                if _names_provider(item):
                    item = resolve_tool(item)
                if is_toolset(item):
                    self.add_toolset(item)
                else:
                    functions.append(item)
            self.tools.register_tools(functions, infer=True)
        self._dispatcher: Any = None

        #: What runs consult at each phase (``lightagent.interceptors``), set by the capability
        #: claiming ``hooks=``, the guardrails and policy. None: the loop's fast path.
        self.interceptor: Any = None
        self._session_store_spec = session_store
        self._binding: Any = None
        #: Each capability's part of this agent (``lightagent.extensions``), by extension name.
        self._parts: dict[str, Any] = {}
        if claimed:
            from lightagent.extensions import agent_extensions

            extensions = agent_extensions()
            for ext_name, values in sorted(claimed.items(), key=lambda i: extensions[i[0]].order):
                self._parts[ext_name] = extensions[ext_name].configure(self, values)

    def __getattr__(self, name: str) -> Any:
        # Only names the class lacks get here: a capability's methods and properties.
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        from lightagent.extensions import attribute_owner

        extension = attribute_owner(name)
        if extension is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return extension.attribute(self, self.extension_part(extension.name), name)

    def extension_part(self, name: str) -> Any:
        """The part of installed extension ``name`` on this agent (configured on first use)."""
        parts = self._parts
        if name not in parts:
            from lightagent.extensions import agent_extensions

            extension = agent_extensions().get(name)
            if extension is None:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"no installed capability registers the agent extension {name!r}",
                    hint="`lightagent plugins` lists what is installed.",
                )
            part = extension.configure(self, {})  # outside the lock: it may use the agent's
            with self._lock:
                return parts.setdefault(name, part)
        return parts[name]

    # -- configuration seams ----------------------------------------------------------
    @property
    def model(self) -> Any:
        """The ``Model`` object runs use (resolved from ``model=`` on first use)."""
        model = self._model
        if model is None:
            with self._lock:
                if self._model is None:
                    self._model = as_model(
                        resolve_model(
                            self._model_spec,
                            api_key=self.api_key,
                            base_url=self.base_url,
                            provider=self.provider,
                            client=self._client,
                        )
                    )
                model = self._model
        return model

    def _run_interceptor(self) -> Any:
        """The interceptor for a new run (None: the fast path without any control)."""
        interceptor = self.interceptor
        return None if getattr(interceptor, "idle", False) else interceptor

    @property
    def client(self) -> Any:
        """The model's OpenAI-style client (the seeds' injection seam; settable)."""
        return getattr(self.model, "client", None)

    @client.setter
    def client(self, value: Any) -> None:
        with self._lock:
            self._client = value
            current = self._model
            if current is not None and hasattr(current, "client"):
                current.client = value
                return
            if current is not None:
                # a non-OpenAI model object: route calls through the injected client instead
                self._model_spec = getattr(current, "name", None)
            self._model = None

    @property
    def session_binding(self) -> Any:
        """The ``SessionBinding`` over ``session_store=`` (None when no store is set)."""
        if self._session_store_spec is None:
            return None
        if self._binding is None:
            with self._lock:
                if self._binding is None:
                    try:
                        from lightagent.events.binding import SessionBinding
                    except ImportError as exc:
                        raise ConfigurationError(
                            "LA-CONFIG",
                            f"session_store= needs lightagent.events.binding, which failed to import: {exc}",
                        ) from exc
                    self._binding = SessionBinding(resolve_store(self._session_store_spec))
        return self._binding

    def export_trace(self) -> list[dict[str, Any]]:
        """The events of the last run made with ``trace=True`` (prefer ``RunResult.trace``
        when one agent serves concurrent runs)."""
        return list(self._last_trace)

    # -- running ----------------------------------------------------------------------
    # What a type checker sees: the return type follows ``stream`` and ``result_format``
    # when they are literals and no ``options=`` object is given (else ``Any``).
    @overload
    def run(
        self,
        query: str,
        *,
        stream: Literal[False] = ...,
        result_format: Literal["str"] = ...,
        options: None = ...,
        **kwargs: Any,
    ) -> str: ...
    @overload
    def run(
        self,
        query: str,
        *,
        stream: Literal[False] = ...,
        result_format: Literal["object"],
        options: None = ...,
        **kwargs: Any,
    ) -> RunResult: ...
    @overload
    def run(
        self,
        query: str,
        *,
        stream: Literal[False] = ...,
        result_format: Literal["dict"],
        options: None = ...,
        **kwargs: Any,
    ) -> dict[str, Any]: ...
    @overload
    def run(
        self,
        query: str,
        *,
        stream: Literal[True],
        result_format: Literal["str"] = ...,
        options: None = ...,
        **kwargs: Any,
    ) -> Iterator[dict[str, Any]]: ...
    @overload
    def run(
        self,
        query: str,
        *,
        stream: Literal[True],
        result_format: Literal["event"],
        options: None = ...,
        **kwargs: Any,
    ) -> Iterator[StreamEvent]: ...
    @overload
    def run(self, query: str, *, options: RunOptions | None = ..., **kwargs: Any) -> Any: ...
    def run(self, query: str, *, options: RunOptions | None = None, **kwargs: Any) -> Any:
        """Run one query. Returns a ``str`` by default.

        The run's options (:class:`~lightagent.run.run_options.RunOptions`: ``tools``,
        ``stream``, ``max_retry``, ``user_id``, ``history``, ``result_format``, ``trace``,
        ``session_id`` …, listed in ``docs/agent.md``) come as keywords or as
        ``options=RunOptions(...)``. ``result_format="object"`` gives a
        :class:`RunResult`, ``"dict"`` its dict. With ``stream=True`` it returns an iterator
        of OpenAI ``chat.completion.chunk`` dicts and the seeds' tool dicts, or of
        :class:`StreamEvent` with ``result_format="event"``.
        """
        return self._drive(query, options=RunOptions.of(options, kwargs))

    @overload
    async def arun(
        self,
        query: str,
        *,
        stream: Literal[False] = ...,
        result_format: Literal["str"] = ...,
        options: None = ...,
        **kwargs: Any,
    ) -> str: ...
    @overload
    async def arun(
        self,
        query: str,
        *,
        stream: Literal[False] = ...,
        result_format: Literal["object"],
        options: None = ...,
        **kwargs: Any,
    ) -> RunResult: ...
    @overload
    async def arun(
        self,
        query: str,
        *,
        stream: Literal[False] = ...,
        result_format: Literal["dict"],
        options: None = ...,
        **kwargs: Any,
    ) -> dict[str, Any]: ...
    @overload
    async def arun(
        self,
        query: str,
        *,
        stream: Literal[True],
        result_format: Literal["str"] = ...,
        options: None = ...,
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]: ...
    @overload
    async def arun(
        self,
        query: str,
        *,
        stream: Literal[True],
        result_format: Literal["event"],
        options: None = ...,
        **kwargs: Any,
    ) -> AsyncIterator[StreamEvent]: ...
    @overload
    async def arun(self, query: str, *, options: RunOptions | None = ..., **kwargs: Any) -> Any: ...
    async def arun(self, query: str, *, options: RunOptions | None = None, **kwargs: Any) -> Any:
        """Async :meth:`run` (same options); with ``stream=True`` it returns an async iterator."""
        return await self._adrive(query, options=RunOptions.of(options, kwargs))

    @overload
    def astream(
        self,
        query: str,
        *,
        result_format: Literal["str"] = ...,
        options: None = ...,
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]: ...
    @overload
    def astream(
        self, query: str, *, result_format: Literal["event"], options: None = ..., **kwargs: Any
    ) -> AsyncIterator[StreamEvent]: ...
    @overload
    def astream(
        self, query: str, *, options: RunOptions | None = ..., **kwargs: Any
    ) -> AsyncIterator[Any]: ...
    def astream(
        self, query: str, *, options: RunOptions | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async iterator over a streamed run (``await arun(query, stream=True)`` in one step)."""
        from lightagent.run.async_driver import adrive_stream

        opts = RunOptions.of(options, kwargs, where="astream()")
        if opts.extensions:
            out = _delegate(self, query, opts, "astream")
            if out is not NotImplemented:
                return cast("AsyncIterator[Any]", out)
        if not opts.stream:
            opts = opts.replace(stream=True)
        spec = build_spec(self, query, opts)
        return self._track(adrive_stream(spec), spec)

    def resume(
        self, run_id: str, *, session_id: str, options: RunOptions | None = None, **kwargs: Any
    ) -> Any:
        """Continue an interrupted run from its session log without repeating side effects.

        See :func:`lightagent.events.resume.resume_steps` (``reconcile=``, ``approve=``,
        ``store=``, ``lease_seconds=``); the other keywords are run options.
        """
        from lightagent.events.resume import resume

        return resume(self, run_id, session_id=session_id, options=options, **kwargs)

    async def aresume(
        self, run_id: str, *, session_id: str, options: RunOptions | None = None, **kwargs: Any
    ) -> Any:
        """Async :meth:`resume`."""
        from lightagent.events.resume import aresume

        return await aresume(self, run_id, session_id=session_id, options=options, **kwargs)

    def _drive(
        self,
        query: str | None = None,
        *,
        options: RunOptions | None = None,
        initial_messages: list[dict[str, Any]] | None = None,
        skip_calls: Mapping[str, str] | None = None,
        run_id: str | None = None,
        call_keys: Mapping[str, str] | None = None,
    ) -> Any:
        """The sync driver entry (``run`` and ``resume`` use it).

        ``initial_messages`` starts the loop from a transcript (no system prompt or
        history is added); tool calls of its last assistant message without a result
        are run first, except those in ``skip_calls`` (``{call_id: output}``), whose
        recorded output is used. ``run_id`` keeps the original run's id so tool-call
        idempotency keys match; ``call_keys`` (``{call_id: key}``) gives pending calls the
        key recorded for their first attempt.
        """
        from lightagent.run.sync_driver import drive, drive_stream

        if options is not None and options.extensions and initial_messages is None:
            out = _delegate(self, query, options, "run")
            if out is not NotImplemented:
                return out
        spec = build_spec(
            self,
            query,
            options or RunOptions(),
            initial_messages=initial_messages,
            skip_calls=skip_calls,
            run_id=run_id,
            call_keys=call_keys,
        )
        if spec.stream:
            return self._track(drive_stream(spec), spec)
        out = self._finish(drive(spec), spec)
        drain(self.logger)  # the run's log lines are in log_file when it returns
        return out

    async def _adrive(
        self,
        query: str | None = None,
        *,
        options: RunOptions | None = None,
        initial_messages: list[dict[str, Any]] | None = None,
        skip_calls: Mapping[str, str] | None = None,
        run_id: str | None = None,
        call_keys: Mapping[str, str] | None = None,
    ) -> Any:
        """The async driver entry; same arguments as :meth:`_drive`."""
        from lightagent.run.async_driver import adrive, adrive_stream

        if options is not None and options.extensions and initial_messages is None:
            out = _delegate(self, query, options, "arun")
            if out is not NotImplemented:
                return await out
        spec = build_spec(
            self,
            query,
            options or RunOptions(),
            initial_messages=initial_messages,
            skip_calls=skip_calls,
            run_id=run_id,
            call_keys=call_keys,
        )
        if spec.stream:
            return self._track(adrive_stream(spec), spec)
        out = self._finish(await adrive(spec), spec)
        await adrain(self.logger)
        return out

    # -- internals --------------------------------------------------------------------
    def _finish(self, result: RunResult, spec: RunSpec) -> Any:
        log_failure(self.logger, result)  # a str result hides the error: the log shows it
        self._last_session = (spec.ctx.session_id, spec.ctx.user_id)  # the seeds' "current"
        self._last_messages = result.messages  # get_history()
        # As in the seeds, the last run's trace: empty after a run without trace=True.
        self._last_trace = result.trace if spec.ctx.record else []
        fmt = spec.result_format
        if fmt == "str":
            return result.content if result.content is not None else ""
        if fmt == "dict":
            return result.to_dict()
        return result

    def _track(self, stream: Any, spec: RunSpec) -> Any:
        self._last_session = (spec.ctx.session_id, spec.ctx.user_id)
        # Filled in as the stream runs; empty for a stream without trace=True.
        self._last_trace = spec.ctx.trace if spec.ctx.record else []
        spec.on_result = self._streamed  # get_history() once the stream has ended
        if not any(isinstance(h, QueuedFileHandler) for h in self.logger.handlers):
            return stream
        if hasattr(stream, "__anext__"):
            return _adrained(stream, self.logger)
        return _drained(stream, self.logger)

    def _streamed(self, result: RunResult) -> None:
        log_failure(self.logger, result)
        self._last_messages = result.messages

    def _base_dispatcher(self) -> Any:
        from lightagent.tools.dispatch import AsyncToolDispatcher

        with self._lock:
            if self._dispatcher is None:
                self._dispatcher = AsyncToolDispatcher(
                    self.tools,
                    default_timeout=self._tool_timeout,
                    max_workers=self._max_tool_workers,
                )
            return self._dispatcher

    def __repr__(self) -> str:
        return (
            f"LightAgent(name={self.name!r}, model={getattr(self._model, 'name', self._model_spec)!r}, "
            f"tools={len(self.tools)}, toolsets={len(self.toolsets)})"
        )


def _drained(
    stream: Generator[Any, None, Any], logger: logging.Logger
) -> Generator[Any, None, Any]:
    """``stream``, ending once its log lines are in ``log_file`` (its return value kept)."""
    result = yield from stream
    drain(logger)
    return result


async def _adrained(
    stream: AsyncGenerator[Any, None], logger: logging.Logger
) -> AsyncIterator[Any]:
    """``stream``, ending once its log lines are in ``log_file`` (waited for off the loop)."""
    try:
        async for item in stream:
            yield item
    finally:  # a consumer that stops early closes the run's stream too, as without the wrapper
        await stream.aclose()
    await adrain(logger)


def _delegate(agent: LightAgent, query: Any, opts: RunOptions, mode: str) -> Any:
    """What the first extension that takes this run over returns (``NotImplemented``: none).

    With ``mode="arun"`` that is an awaitable.
    """
    from lightagent.extensions import agent_extensions

    for extension in agent_extensions().values():
        if any(name in opts.extensions for name in extension.run_options):  # type: ignore[operator]
            out = extension.delegate(agent, query, opts, mode)
            if out is not NotImplemented:
                return out
    return NotImplemented


def _names_provider(item: Any) -> bool:
    """A registered name, or ``("name", {configuration})``."""
    return isinstance(item, str) or (
        isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
    )


def _init_parameters() -> list[str]:
    import inspect

    params = inspect.signature(LightAgent.__init__).parameters.values()
    return [p.name for p in params if p.kind is p.KEYWORD_ONLY]


def _logger(name: str, level: str, log_file: str | None, debug: bool) -> logging.Logger:
    from lightagent.agent_log import agent_logger  # log_file= writes off the caller's thread

    return agent_logger(name, level, log_file, debug)
