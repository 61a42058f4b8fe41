"""Agent extensions: the one way a capability distribution reaches ``LightAgent``.

A distribution registers an :class:`AgentExtension` through the ``register_agent_extensions``
hook. The extension claims ``LightAgent(...)`` keywords, ``run(...)`` options and agent
attributes (methods and properties such as ``agent.start_job``); when an agent is built
with one of its keywords, or one of its attributes is first used (or at the first run of
an agent using what the extension ``follows``: a session), the extension is given
the agent and returns the agent's *part*. For each run the part may add to the system
prompt, stack toolsets over the agent's, and contribute a :class:`RunStep`, which the loop
calls at fixed moments (before each model request, after each tool round …). The loop and
the kernel never name a capability: they only call what a part contributes.

Construction stays free of side effects: the plugins are scanned only when a keyword or an
attribute the kernel does not define is used. A seeds keyword or attribute whose
distribution is not installed is ``LA-MISSING-EXTRA`` naming the ``pip install`` line
(:mod:`lightagent.vocabulary`).
"""

from __future__ import annotations

from collections.abc import Collection, Generator, Mapping
from typing import Any

__all__ = [
    "AgentExtension",
    "ExtensionPart",
    "RunStep",
    "agent_extensions",
    "attribute_owner",
    "claim",
    "claimable",
    "follow",
]

Steps = Generator[Any, Any, None]


class RunStep:
    """A capability's part in one run, made for that run (so it may hold the run's state).

    The loop calls each method at its moment; every method here does nothing, so a step
    overrides only what it needs. Generator methods may ``yield`` effects as the loop does
    (a model call, a phase question …) and get the driver's answer back; ``spec`` is the
    run's :class:`~lightagent.run.spec.RunSpec` and ``st`` its
    :class:`~lightagent.run.state.RunState`. Raising a ``LightAgentError`` ends the run
    with that error, as in the loop itself.
    """

    #: Steps run in rising ``order`` (then in the order their parts were configured).
    order: int = 0

    def begin(self, spec: Any, st: Any, start: dict[str, Any]) -> None:
        """First, when the run records events: what is put in ``start`` is added to the
        ``run_start`` event's data."""

    def recall(self, spec: Any, st: Any, query: str, messages: list[dict[str, Any]]) -> Steps:
        """Once, when the run's ``query`` has joined ``messages`` (not on a resume without a
        new query), before the tools are listed: what the capability recalls for it (its
        memories, say) may be added to ``messages`` in place."""
        return
        yield

    def start(
        self,
        spec: Any,
        st: Any,
        history: Any,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> Steps:
        """Once, after the prompt is assembled and the tools are chosen, before any request.

        ``history`` is what the session or ``history=`` gave (None on a resumed run).
        """
        return
        yield

    def before_request(
        self, spec: Any, st: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Steps:
        """Before each model request is built: ``messages`` may be edited in place."""
        return
        yield

    def request(self, spec: Any, st: Any, request: Any) -> None:
        """The request as it will go out (after the interceptor); raise to refuse it."""

    def response(self, spec: Any, st: Any, request: Any, response: Any) -> None:
        """The model's answer to ``request`` arrived."""

    def request_failed(
        self, spec: Any, st: Any, error: Any, messages: list[Any]
    ) -> Generator[Any, Any, bool]:
        """The request failed with ``error``: return True once ``messages`` are mended and
        it should be sent again (else the error ends the run)."""
        return False
        yield

    def calls(
        self,
        spec: Any,
        st: Any,
        calls: list[Any],
        assistant: dict[str, Any],
        messages: list[dict[str, Any]],
    ) -> Generator[Any, Any, bool]:
        """The model asked for ``calls`` (those naming offered tools); return True to end the
        run here (it was handed on, ``st.handoff`` says where)."""
        return False
        yield

    def before_tools(self, spec: Any, st: Any, calls: list[Any]) -> None:
        """Before a tool round runs ``calls``; raise to refuse the round."""

    def after_tools(
        self, spec: Any, st: Any, calls: list[Any], messages: list[dict[str, Any]]
    ) -> None:
        """After a tool round: every call of it has its result in ``messages``."""

    def finish(self, spec: Any, st: Any, content: str | None) -> Steps:
        """The run answered ``content`` (not called when it failed or was handed on)."""
        return
        yield

    def end(self, spec: Any, st: Any, end: dict[str, Any]) -> None:
        """Last, failed or not: ``end`` is the ``run_end`` event's data, which may be added to."""


class ExtensionPart:
    """What an extension keeps on one agent; each method is asked once per run."""

    def system_prompt(self, prompt: str | None, options: Any) -> str | None:
        """The run's system prompt, given the one so far."""
        return prompt

    def toolsets(self, options: Any) -> tuple[Any, ...]:
        """Toolsets (routers) stacked over the agent's own for this run."""
        return ()

    def run_step(self, spec: Any, options: Any) -> RunStep | None:
        """This run's :class:`RunStep`, or None when the capability has nothing to do in it."""
        return None


class AgentExtension:
    """A capability's claim on ``LightAgent``: subclass it and register an instance.

    ``keywords`` and ``run_options`` map each claimed name to the value that means "not
    used"; ``attributes`` are the agent attributes the extension provides; ``follows``
    names what makes an agent use the extension without naming it (see the attribute).
    """

    #: The extension's name (its distribution's, by convention).
    name: str = ""
    keywords: Mapping[str, Any] = {}
    run_options: Mapping[str, Any] = {}
    attributes: Collection[str] = ()
    #: What makes an agent use the extension without naming it: ``"session"`` (a run with a
    #: session). Its part is configured at the agent's first such run.
    follows: Collection[str] = ()
    #: Parts of one agent are configured in rising ``order``: an extension whose part others
    #: read at configuration (the interceptor, say) goes first.
    order: int = 0

    def configure(self, agent: Any, values: dict[str, Any]) -> ExtensionPart | None:
        """The agent's part, from the claimed keywords it was built with (``{}`` when an
        attribute is used first). Check them here: a bad value fails the construction."""
        return None

    def attribute(self, agent: Any, part: Any, name: str) -> Any:
        """The value of ``agent.<name>`` (a bound method for a method)."""
        return getattr(part, name)

    def delegate(self, agent: Any, query: Any, options: Any, mode: str) -> Any:
        """Run elsewhere when a claimed run option asks for it (``mode``: ``run``, ``arun``
        or ``astream``); ``NotImplemented`` runs the agent's own loop."""
        return NotImplemented


def agent_extensions() -> dict[str, AgentExtension]:
    """Every registered extension by name (the plugins are loaded on the first call)."""
    from lightagent.plugins import get_registry

    return get_registry().derived("agent_extensions", _load_extensions)  # type: ignore[no-any-return]


def _load_extensions(registry: Any) -> dict[str, AgentExtension]:
    found: dict[str, AgentExtension] = {}
    for entry in registry.list("agent_extension"):
        extension = entry.load()
        if isinstance(extension, type):
            extension = extension()
        found.setdefault(extension.name or entry.name, extension)
    return found


def claim(values: Mapping[str, Any], kind: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Split ``values`` (keywords of ``kind``: ``keywords`` or ``run_options``) by the
    extension claiming each: ``({extension: {name: value}}, unclaimed)``.

    A seeds name nothing installed claims is dropped when its value means "not used" and
    is ``LA-MISSING-EXTRA`` otherwise.
    """
    from lightagent import vocabulary

    owners: dict[str, list[str]] = {}
    for extension in agent_extensions().values():
        for name in getattr(extension, kind):
            owners.setdefault(name, []).append(extension.name)
    seeds = vocabulary.KEYWORDS if kind == "keywords" else vocabulary.RUN_OPTIONS
    claimed: dict[str, dict[str, Any]] = {}
    rest: dict[str, Any] = {}
    for name, value in values.items():
        owner = owners.get(name)
        if owner is not None:
            if len(owner) > 1:  # neither may win silently: the value means one of them
                from lightagent.errors import PluginError

                raise PluginError(
                    "LA-PLUGIN",
                    f"{name}= is claimed by the agent extensions {', '.join(sorted(owner))}",
                    hint="Uninstall or disable one of their plugins (LIGHTAGENT_DISABLE_PLUGINS).",
                    details={"name": name, "extensions": sorted(owner)},
                )
            claimed.setdefault(owner[0], {})[name] = value
        elif name in seeds:
            extra, unused = seeds[name]
            if value is unused or value == unused:
                continue
            _missing(f"{name}=", extra)
        else:
            rest[name] = value
    return claimed, rest


def claimable(kind: str) -> list[str]:
    """Every name of ``kind`` (``keywords`` or ``run_options``) an installed extension claims
    or a seeds distribution would: what a typo's "did you mean" may suggest."""
    from lightagent import vocabulary

    names = set(vocabulary.KEYWORDS if kind == "keywords" else vocabulary.RUN_OPTIONS)
    for extension in agent_extensions().values():
        names.update(getattr(extension, kind))
    return sorted(names)


def attribute_owner(name: str) -> AgentExtension | None:
    """The extension providing agent attribute ``name``; ``LA-MISSING-EXTRA`` for a seeds
    attribute nothing installed provides; None for any other name."""
    for extension in agent_extensions().values():
        if name in extension.attributes:
            return extension
    from lightagent.vocabulary import ATTRIBUTES

    extra = ATTRIBUTES.get(name)
    if extra is not None:
        _missing(f"agent.{name}", extra)
    return None


def follow(agent: Any, keyword: str) -> None:
    """Give ``agent`` the part of each extension that follows ``keyword`` (``"session"``)."""
    for extension in agent_extensions().values():
        if keyword in extension.follows:
            agent.extension_part(extension.name)


def _missing(what: str, extra: str) -> None:
    from lightagent.extras import missing_extra
    from lightagent.vocabulary import distribution

    raise missing_extra(what, distribution(extra), extra)
