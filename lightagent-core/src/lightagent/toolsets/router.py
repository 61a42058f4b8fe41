"""``ToolsetRouter``: an agent's toolsets merged into one tool list, and calls routed back.

The merged list is a ``ToolRegistry`` overlay over the agent's own function tools: each
toolset tool becomes a ``Tool`` whose function forwards the call to its toolset (through
the toolset's owner, see :mod:`lightagent.toolsets.owner`). The dispatcher then validates,
times and reports toolset calls exactly like function calls. The overlay is rebuilt only
when a toolset reports a change (``version`` or a ``subscribe`` callback) or the agent's
own tools change; otherwise asking for it costs a few attribute reads.

Names: a toolset's tool keeps its name unless the toolset sets ``namespace_tools`` or the
name collides with another tool; then it becomes ``<namespace>__<name>``. The agent's own
function tools always keep their names. Every rename is reported
(:attr:`ToolsetView.conflicts`, a ``toolset_conflict`` event, a log warning). A name model
APIs refuse is fitted by the rule local tools follow (:func:`fit_tool_name`), or the tool
is left out; so is a tool whose name is still taken, and each tool a toolset names in its
``withheld`` mapping (tool -> why it is not offered). Each is in
:attr:`ToolsetView.skipped` (a ``toolset_tool_renamed`` / ``toolset_tool_dropped`` event):
one toolset's bad names never fail a run.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.errors import ToolError
from lightagent.tools.diagnostics import fit_tool_name
from lightagent.toolsets.owner import ToolsetOwner
from lightagent.toolsets.protocol import ToolCallContext, ToolDefinition, ToolResult

__all__ = ["ToolsetConflict", "ToolsetRouter", "ToolsetView", "qualified_name", "to_definition"]

_log = logging.getLogger("lightagent.toolsets")
_NEVER = object()
_CONTEXT_ARG = "_lightagent_context"
_KEY_ARG = "_lightagent_idempotency_key"


def qualified_name(namespace: str, name: str) -> str:
    """``<namespace>__<name>``, made safe for model APIs by :func:`fit_tool_name`."""
    ns = fit_tool_name(namespace)[0] or "toolset"
    full = fit_tool_name(f"{ns}__{name}")[0]
    return full or f"{ns}__{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


def to_definition(item: Any) -> ToolDefinition:
    """A :class:`ToolDefinition` from what a toolset listed (a definition, a dict, a ``Tool``)."""
    if isinstance(item, ToolDefinition):
        return item
    if isinstance(item, Mapping):
        get = item.get
    else:

        def get(key: str, default: Any = None) -> Any:
            return getattr(item, key, default)

    name = get("name")
    if not isinstance(name, str) or not name:
        raise ToolError(
            "LA-TOOL-DEFINITION",
            f"a toolset listed a tool without a name: {item!r}"[:200],
            hint="list_tools() must return ToolDefinition objects (or dicts with a name).",
        )
    parameters = get("parameters") or get("inputSchema") or get("input_schema")
    if not isinstance(parameters, dict):
        parameters = {"type": "object", "properties": {}}
    output = get("output_schema") or get("outputSchema")
    metadata = get("metadata")
    return ToolDefinition(
        name=name,
        description=str(get("description") or ""),
        parameters=parameters,
        output_schema=output if isinstance(output, dict) else None,
        title=get("title") if isinstance(get("title"), str) else None,
        untrusted_output=bool(get("untrusted_output", False)),
        metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
    )


@dataclass(frozen=True)
class ToolsetConflict:
    """A tool name offered more than once, and how it was resolved."""

    name: str
    #: Who offered it: toolset namespaces, and ``"agent"`` for the agent's own tools.
    offered_by: tuple[str, ...]
    #: namespace -> the name the model sees for that toolset's tool.
    renamed: dict[str, str]

    def describe(self) -> str:
        """One line for logs."""
        moves = ", ".join(f"{ns}: {new}" for ns, new in self.renamed.items())
        return f"tool {self.name!r} is offered by {', '.join(self.offered_by)}; renamed {moves}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form."""
        return {"name": self.name, "offered_by": list(self.offered_by), "renamed": self.renamed}


@dataclass
class ToolsetView:
    """What the loop uses for one model request: the merged registry and the renames."""

    registry: Any
    conflicts: list[ToolsetConflict] = field(default_factory=list)
    #: Tool definition hashes by exposed name (toolset tools only).
    hashes: dict[str, str] = field(default_factory=dict)
    #: Toolsets that failed to open or list (``{"toolset", "error"}``); their tools are left out.
    errors: list[dict[str, Any]] = field(default_factory=list)
    #: Tools renamed to a valid name or left out: ``{"toolset", "server", "tool", "exposed",
    #: "code", "reason"}`` (``exposed`` is None for a tool left out).
    skipped: list[dict[str, Any]] = field(default_factory=list)


class _Entry:
    __slots__ = (
        "__weakref__",
        "definitions",
        "dirty",
        "error",
        "listener",
        "owner",
        "seen_version",
    )

    def __init__(self, owner: ToolsetOwner) -> None:
        self.owner = owner
        self.definitions: list[ToolDefinition] | None = None
        self.seen_version: Any = _NEVER
        self.dirty = False
        self.listener: Any = None
        self.error: dict[str, Any] | None = None

    @property
    def toolset(self) -> Any:
        return self.owner.toolset

    @property
    def namespace(self) -> str:
        ns = getattr(self.toolset, "namespace", None)
        return str(ns) if ns else type(self.toolset).__name__.lower()

    def stale(self) -> bool:
        if self.definitions is None or self.dirty:
            return True
        version = getattr(self.toolset, "version", _NEVER)
        return version is not _NEVER and version != self.seen_version

    def take(self, listed: Any, version: Any) -> None:
        self.definitions = [to_definition(item) for item in listed or ()]
        self.seen_version = version
        self.dirty = False
        self.error = None

    def failed(self, exc: BaseException) -> None:
        # Keep the last good list (or none) and try again at the next request.
        from lightagent.errors import LightAgentError

        if self.definitions is None:
            self.definitions = []
        self.dirty = True
        error = (
            exc.to_dict()
            if isinstance(exc, LightAgentError)
            else {"code": "LA-TOOLSET", "message": f"{type(exc).__name__}: {exc}"}
        )
        self.error = {"toolset": self.namespace, "error": error}
        _log.warning("toolset %s could not be listed: %s", self.namespace, error["message"])


def _chain_version(registry: Any) -> tuple[int, ...]:
    versions = []
    while registry is not None:
        versions.append(getattr(registry, "_version", 0))
        registry = getattr(registry, "_base", None)
    return tuple(versions)


def _result_value(name: str, result: Any) -> Any:
    if isinstance(result, ToolResult):
        if result.is_error:
            from lightagent.tools.output import format_output

            raise ToolError(
                "LA-TOOL",
                format_output(result.content) if result.content is not None else "tool error",
                details={"tool": name},
            )
        value = result.content if result.content is not None else result.structured
        details = {"structured": result.structured, "metadata": result.metadata}
        details = {k: v for k, v in details.items() if v}
        if details:
            from lightagent.tools.output import DetailedOutput, format_output

            return DetailedOutput(format_output(value), details)
        return value
    return result


class ToolsetRouter:
    """An agent's toolsets (other than its own function tools), merged and routed."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._lock = threading.Lock()
        self._generation = 0
        self._cache: tuple[Any, tuple[int, ...], int, ToolsetView] | None = None
        self._warned: set[str] = set()

    # -- membership -------------------------------------------------------------------
    def add(self, toolset: Any) -> ToolsetOwner:
        """Add a toolset; returns its owner (lifecycle and calls)."""
        with self._lock:
            if any(e.toolset is toolset for e in self._entries):
                raise ToolError(
                    "LA-TOOLSET-CONFLICT",
                    f"this {type(toolset).__name__} toolset is already added",
                )
            entry = _Entry(ToolsetOwner(toolset))
            subscribe = getattr(toolset, "subscribe", None)
            if callable(subscribe):
                # weak: the toolset (kept alive by its owner task) must not keep the agent alive
                ref = weakref.ref(entry)

                def changed() -> None:
                    target = ref()
                    if target is not None:
                        target.dirty = True

                entry.listener = changed
                subscribe(changed)
            self._entries.append(entry)
            self._generation += 1
            return entry.owner

    def remove(self, toolset: Any) -> ToolsetOwner | None:
        """Remove a toolset (the object, or its namespace); returns its owner to close."""
        with self._lock:
            for entry in self._entries:
                if entry.toolset is toolset or (
                    isinstance(toolset, str) and entry.namespace == toolset
                ):
                    self._entries.remove(entry)
                    unsubscribe = getattr(entry.toolset, "unsubscribe", None)
                    if entry.listener is not None and callable(unsubscribe):
                        unsubscribe(entry.listener)
                    self._generation += 1
                    return entry.owner
        return None

    def owners(self) -> list[ToolsetOwner]:
        """The owners, in the order the toolsets were added."""
        return [e.owner for e in self._entries]

    def __len__(self) -> int:
        return len(self._entries)

    # -- the merged view --------------------------------------------------------------
    def view(self, base: Any) -> ToolsetView:
        """The merged registry over ``base`` (sync: lists stale toolsets, blocking)."""
        return decide(self._view(base))

    async def aview(self, base: Any) -> ToolsetView:
        """Async :meth:`view`."""
        return await adecide(self._view(base))

    def _view(self, base: Any) -> Decider[ToolsetView]:
        """Relist each stale toolset (a failure is kept as that toolset's error), then merge."""
        for entry in [e for e in self._entries if e.stale()]:
            version = getattr(entry.toolset, "version", None)
            try:
                entry.take((yield Call(entry.owner.list, afn=entry.owner.alist)), version)
            except Exception as exc:
                entry.failed(exc)
            self._bump()
        return self._merged(base)

    def _bump(self) -> None:
        with self._lock:
            self._generation += 1

    def _merged(self, base: Any) -> ToolsetView:
        key = _chain_version(base)
        cached = self._cache
        if (
            cached is not None
            and cached[0] is base
            and cached[1] == key
            and cached[2] == self._generation
        ):
            return cached[3]
        with self._lock:
            generation = self._generation
            entries = list(self._entries)
        view = self._merge(base, entries)
        self._cache = (base, key, generation, view)
        return view

    def _merge(self, base: Any, entries: Iterable[_Entry]) -> ToolsetView:
        from lightagent.tools.registry import ToolRegistry, _Overlay

        entries = [e for e in entries if e.definitions is not None]
        own = set(base.names()) if base is not None else set()
        skipped: list[dict[str, Any]] = []
        listed: list[tuple[_Entry, ToolDefinition, str, str | None]] = []
        for entry in entries:
            for definition in entry.definitions or ():
                fitted, why = fit_tool_name(definition.name)
                if fitted is None:
                    skipped.append(_skip(entry, definition, None, "LA-TOOL-DEFINITION", str(why)))
                else:
                    listed.append((entry, definition, fitted, why))
            # tools the toolset knows but will not offer (e.g. MCP task-only tools), and why
            withheld = getattr(entry.toolset, "withheld", None)
            for tool, reason in withheld.items() if isinstance(withheld, Mapping) else ():
                gone = ToolDefinition(name=str(tool))
                skipped.append(_skip(entry, gone, None, "LA-TOOL-DEFINITION", str(reason)))
        offered: dict[str, list[str]] = {}
        for entry, _, fitted, _ in listed:
            offered.setdefault(fitted, []).append(entry.namespace)
        renames: dict[str, dict[str, str]] = {}
        wanted: list[str] = []
        for entry, _, fitted, _ in listed:
            collides = fitted in own or len(offered[fitted]) > 1
            prefix = collides or bool(getattr(entry.toolset, "namespace_tools", False))
            wanted.append(qualified_name(entry.namespace, fitted) if prefix else fitted)
            if collides:
                renames.setdefault(fitted, {})[entry.namespace] = wanted[-1]
        # A name is claimed first by the agent's own tools, then by tools that keep the name
        # their toolset gave, then by renamed ones in toolset order; a tool whose name is
        # still taken is left out with an event, never the whole run.
        holder: dict[str, str] = dict.fromkeys(own, "the agent's own tools")
        keep: list[bool] = [False] * len(listed)
        order = sorted(range(len(listed)), key=lambda i: wanted[i] != listed[i][1].name)
        for i in order:
            entry, definition, _, why = listed[i]
            name = wanted[i]
            if name in holder:
                taken = f"the name {name!r} is taken by {holder[name]}"
                skipped.append(_skip(entry, definition, None, "LA-TOOLSET-CONFLICT", taken))
                continue
            holder[name] = f"toolset {entry.namespace!r}"
            keep[i] = True
            if why is not None:
                skipped.append(_skip(entry, definition, name, "LA-TOOL-DEFINITION", why))
        overlay = _Overlay(base if base is not None else ToolRegistry())
        hashes: dict[str, str] = {}
        for i, (entry, definition, _, _) in enumerate(listed):
            if keep[i]:
                overlay._add(_proxy(entry.owner, entry.namespace, definition, wanted[i]))
                hashes[wanted[i]] = definition.definition_hash
        conflicts = [
            ToolsetConflict(
                bare,
                tuple((["agent"] if bare in own else []) + offered[bare]),
                moves,
            )
            for bare, moves in renames.items()
        ]
        for text in [c.describe() for c in conflicts] + [_describe(s) for s in skipped]:
            if text not in self._warned:
                self._warned.add(text)
                _log.warning("toolset tool names: %s", text)
        errors = [e.error for e in self._entries if e.error is not None]
        return ToolsetView(overlay, conflicts, hashes, errors, skipped)


def _shown(name: str) -> str:
    """``name`` safe to print: invisible and control characters escaped, at most 200 characters."""
    text = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in name)
    return text if len(text) <= 200 else text[:200] + "..."


def _skip(
    entry: _Entry, definition: ToolDefinition, exposed: str | None, code: str, reason: str
) -> dict[str, Any]:
    """The event data of a tool renamed (``exposed``) or left out (``exposed`` None)."""
    server = definition.metadata.get("server")
    return {
        "toolset": entry.namespace,
        **({"server": server} if isinstance(server, str) else {}),
        "tool": _shown(definition.name),
        "exposed": exposed,
        "code": code,
        "reason": reason,
    }


def _describe(skip: dict[str, Any]) -> str:
    what = f"offered as {skip['exposed']!r}" if skip["exposed"] else "left out"
    return f"toolset {skip['toolset']!r}: tool {skip['tool']!r} {what}: {skip['reason']}"


def _proxy(owner: ToolsetOwner, namespace: str, definition: ToolDefinition, exposed: str) -> Any:
    """A ``Tool`` named ``exposed`` whose call goes to ``owner``'s toolset as ``definition.name``."""
    from lightagent.tools.decorator import Tool

    original = definition.name

    async def call_toolset(
        _lightagent_context: Any = None,
        _lightagent_idempotency_key: str | None = None,
        **arguments: Any,
    ) -> Any:
        context = ToolCallContext.from_run(
            _lightagent_context, idempotency_key=_lightagent_idempotency_key
        )
        try:
            result = await owner.acall(original, arguments, context)
        finally:
            failure = getattr(context.emit, "failure", None)
            if failure is not None:  # an event the run could not record (a durable log)
                raise failure
        return _result_value(original, result)

    timeout = definition.metadata.get("timeout")
    return Tool(
        name=exposed,
        description=definition.description,
        parameters=definition.parameters,
        func=call_toolset,
        title=definition.title,
        timeout=timeout if isinstance(timeout, (int, float)) and timeout > 0 else None,
        injected={_CONTEXT_ARG: "context", _KEY_ARG: "idempotency_key"},
        source="toolset",
        metadata={
            **definition.metadata,
            "toolset": namespace,
            "original_name": original,
            "untrusted_output": definition.untrusted_output,
            "definition_hash": definition.definition_hash,
        },
    )
