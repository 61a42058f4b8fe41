"""``ToolRegistry``: the tools an agent offers, their cached schemas, diagnostics and selection."""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from typing import Any

from lightagent.errors import ToolError
from lightagent.keywords import seeds_keywords
from lightagent.tools.decorator import Tool, as_tool
from lightagent.tools.diagnostics import diagnose_schema
from lightagent.tools.diagnostics import validate_tool_info as _validate_tool_info
from lightagent.tools.selection import (
    OFFER_ALL_UP_TO,
    ToolIndex,
    called_tools,
    estimate_tokens,
    layered_scores,
    query_terms,
    selection_report,
    strong_match,
    top_scores,
)

__all__ = ["ToolRegistry"]


def _func_label(func: Any) -> str:
    module = getattr(func, "__module__", None) or "?"
    return f"{module}.{getattr(func, '__qualname__', repr(func))}"


def _diagnose(item: Tool) -> list[dict[str, str]]:
    if item.source == "tool_info":
        return _validate_tool_info(item.tool_info)
    return diagnose_schema(item)


def _raise_on_errors(diagnostics: list[dict[str, str]], name: str) -> None:
    errors = [d for d in diagnostics if d["level"] == "error"]
    if errors:
        text = "; ".join(f"{d['field']}: {d['message']}" for d in errors)
        raise ToolError(
            "LA-TOOL-DEFINITION",
            f"tool {name!r}: {text}",
            details={"diagnostics": diagnostics},
            hint="Fix the fields listed, or register with strict=False and see validate_tools().",
        )


class ToolRegistry:
    """Tools by name, with OpenAI schemas cached per tool and a lexical selection index.

    ``register_tool`` accepts a :class:`Tool`, an ``@tool`` function or a seeds-style
    callable with ``tool_info``; registering a name again replaces the earlier tool (and
    :meth:`validate_tools` reports it when the two came from different functions).
    Per-run tools go in a cheap overlay from :meth:`with_tools`, never into ``self``.
    """

    def __init__(self, tools: Iterable[Any] | None = None, *, strict: bool = True) -> None:
        self.strict = strict
        self._tools: dict[str, Tool] = {}
        self._funcs: dict[str, list[Any]] = {}
        self._tokens: dict[str, int] = {}
        self._tokens_total = 0
        self._schemas: list[dict[str, Any]] | None = None
        self._index: ToolIndex | None = None
        self._version = 0
        # Registration may race with selection from other threads' runs.
        self._lock = threading.RLock()
        if tools:
            self.register_tools(tools)

    # -- registration -------------------------------------------------------------
    def _add(self, item: Tool) -> None:
        with self._lock:
            self._add_locked(item)

    def _add_locked(self, item: Tool) -> None:
        previous = self._tools.get(item.name)
        if previous is not None:
            self._tokens_total -= self._tokens[item.name]
        self._tools[item.name] = item
        tokens = estimate_tokens(item.openai_schema())
        self._tokens[item.name] = tokens
        self._tokens_total += tokens
        funcs = self._funcs.setdefault(item.name, [])
        if not any(f is item.func for f in funcs):
            funcs.append(item.func)
        self._schemas = None
        self._version += 1
        if self._index is not None:
            self._index.add(item)

    def register_tool(self, obj: Any, *, strict: bool | None = None, infer: bool = False) -> bool:
        """Register one tool; ``False`` (the seeds' answer) for a callable without ``tool_info``.

        ``infer=True`` also accepts plain typed functions. A definition with errors
        raises ``ToolError("LA-TOOL-DEFINITION")`` unless ``strict=False``.
        """
        if isinstance(obj, str):
            raise ToolError(
                "LA-TOOL-DEFINITION",
                f"cannot register the name {obj!r}: register the tool itself",
                hint="Load tools by name with ToolLoader(tools_directory).load_tools([...]).",
            )
        if not isinstance(obj, Tool) and getattr(obj, "tool_info", None) is None:
            if not callable(obj):
                raise ToolError(
                    "LA-TOOL-DEFINITION",
                    f"{type(obj).__name__} object is not a tool",
                    hint="Pass @tool functions, Tool objects or callables with a tool_info dict.",
                )
            if not infer:
                return False
        strict = self.strict if strict is None else strict
        item = as_tool(obj, strict=strict, infer=infer)
        if strict and isinstance(obj, Tool):  # built directly: not checked on the way in
            _raise_on_errors(_diagnose(item), item.name)
        self._add(item)
        return True

    def register_tools(self, objs: Iterable[Any], *, infer: bool = False) -> None:
        """Register each of ``objs`` (see :meth:`register_tool`)."""
        if isinstance(objs, (str, bytes)) or not isinstance(objs, Iterable):
            raise ToolError(
                "LA-TOOL-DEFINITION",
                "register_tools needs a list of tools",
                hint="Pass a list: register_tools([tool_a, tool_b]).",
            )
        for obj in objs:
            self.register_tool(obj, infer=infer)

    def unregister_tool(self, name: str) -> bool:
        """Remove a tool; ``True`` if it was there."""
        with self._lock:
            item = self._tools.pop(name, None)
            if item is None:
                return False
            self._tokens_total -= self._tokens.pop(name)
            self._funcs.pop(name, None)
            self._schemas = None
            self._version += 1
            if self._index is not None:
                self._index.remove(name)
            return True

    # -- lookup ---------------------------------------------------------------------
    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def get_tool(self, name: str) -> Tool | None:
        """The seeds' name for :meth:`get`."""
        return self.get(name)

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def tools(self) -> list[Tool]:
        """Registered tools, in registration order."""
        return list(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools())

    # -- schemas ----------------------------------------------------------------------
    def schemas(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """OpenAI tool schemas (cached; treat them as read-only), all or for ``names``.

        Unknown names raise ``ToolError("LA-TOOL-NOT-FOUND")``.
        """
        if names is None:
            if self._schemas is None:
                self._schemas = [t.openai_schema() for t in self.tools()]
            return list(self._schemas)
        out = []
        for name in dict.fromkeys(names):
            item = self.get(name)
            if item is None:
                raise ToolError(
                    "LA-TOOL-NOT-FOUND",
                    f"no tool named {name!r}",
                    details={"tool": name, "available": self.names()[:50]},
                )
            out.append(item.openai_schema())
        return out

    def get_tools(self) -> list[dict[str, Any]]:
        """The seeds' name for :meth:`schemas` (every tool)."""
        return self.schemas()

    def get_tools_str(self) -> str:
        """All schemas as JSON text (the seeds' ``get_tools_str``)."""
        return json.dumps(self.schemas(), ensure_ascii=False)

    @seeds_keywords(json_text="selection")
    def filter_tools(
        self, selection: str | Iterable[str] | Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Schemas of the chosen tools; ``selection`` is names or the seeds' ``{"tools": [{"name"}]}``.

        Names that are not registered are skipped. Bad JSON raises ``ValidationError("LA-JSON")``.
        """
        from lightagent.errors import ValidationError

        if isinstance(selection, str):
            try:
                selection = json.loads(selection)
            except json.JSONDecodeError as exc:
                raise ValidationError(
                    "LA-JSON", f"filter_tools got text that is not JSON: {exc.msg}"
                ) from None
        if isinstance(selection, Mapping):
            selection = selection.get("tools") or []
        names = []
        for item in selection if isinstance(selection, Iterable) else ():
            name = item.get("name") if isinstance(item, Mapping) else item
            if isinstance(name, str) and self.get(name) is not None:
                names.append(name)
        return self.schemas(names)

    def schema_tokens(self, names: Iterable[str] | None = None) -> int:
        """Estimated tokens (``len(json)/4``) of all schemas, or of ``names``."""
        if names is None:
            return self._tokens_total
        return sum(self._token_count(n) for n in dict.fromkeys(names))

    def _token_count(self, name: str) -> int:
        return self._tokens.get(name, 0)

    # -- per-run overlay --------------------------------------------------------------
    def with_tools(self, extra: Iterable[Any] | None, *, infer: bool = True) -> ToolRegistry:
        """A registry that adds ``extra`` on top of this one, without copying or mutating it.

        Costs O(len(extra)). Names in ``extra`` must already be registered here; a tool
        in ``extra`` with the name of a registered one shadows it in the overlay only.
        """
        overlay = _Overlay(self)
        for obj in extra or ():
            if isinstance(obj, str):
                if self.get(obj) is None:
                    raise ToolError(
                        "LA-TOOL-NOT-FOUND",
                        f"tools= names {obj!r}, which is not registered",
                        details={"tool": obj},
                        hint="Register it first, or load it with ToolLoader(tools_directory).",
                    )
                continue
            overlay.register_tool(obj, infer=infer)
        return overlay

    # -- adaptive selection ----------------------------------------------------------
    def _ensure_index(self) -> ToolIndex:
        with self._lock:
            if self._index is None:
                index = ToolIndex()
                for item in self._tools.values():
                    index.add(item)
                self._index = index
            return self._index

    def select(
        self,
        query: str,
        *,
        limit: int = 8,
        messages: Sequence[Mapping[str, Any]] | None = None,
        always: Iterable[str] = (),
    ) -> list[str]:
        """The names of the ``limit`` tools that best match ``query`` (BM25), best first.

        ``messages`` (the last few are used at half weight) help with follow-ups;
        ``always`` names are put first and do not count against ``limit``. Tools that
        share no term with the query are not returned.
        """
        if not isinstance(limit, int) or limit < 0:
            from lightagent.errors import ValidationError

            raise ValidationError(
                "LA-VALIDATION", f"limit must be a non-negative int, got {limit!r}"
            )
        pinned = [n for n in dict.fromkeys(always) if self.get(n) is not None]
        terms = query_terms(query or "", messages)
        ranked = self._rank(terms, limit + len(pinned))
        rest = [name for _, name in ranked if name not in pinned][:limit]
        return pinned + rest

    def offer(
        self,
        query: str,
        *,
        limit: int = 8,
        messages: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[str] | None:
        """The tools to offer for one model request, or None for all of them (the loop's choice).

        Recall comes first. A weak match (see :func:`~lightagent.tools.selection.strong_match`)
        offers every tool when there are at most :data:`OFFER_ALL_UP_TO`, else the
        ``4 * limit`` best. Otherwise the ``limit`` best are offered and every tool scoring at
        least half the best (``4 * limit`` at most). Tools called earlier in
        ``messages`` are always offered, so a follow-up keeps what the conversation uses.
        """
        history = list(messages or ())
        used = [n for n in called_tools(history) if self.get(n) is not None]
        terms = query_terms(query or "", history[-4:])
        with self._locked():
            layers = self._layers()
            ranked = top_scores(layered_scores(layers, terms), 4 * limit)
            strong = strong_match(layers, query or "", ranked[0][1] if ranked else None)
        if strong:
            floor = ranked[0][0] / 2
            ranked = [pair for i, pair in enumerate(ranked) if i < limit or pair[0] >= floor]
        elif len(self) <= OFFER_ALL_UP_TO:
            return None
        return list(dict.fromkeys(used + [name for _, name in ranked])) or None

    def _layers(self) -> list[tuple[ToolIndex, Collection[str]]]:
        """The indexes to rank over, bottom first, each with the names shadowed above it."""
        return [(self._ensure_index(), ())]

    def _locked(self) -> ExitStack:
        """This registry's lock and its bases' (bottom first, the one order every caller takes)."""
        stack = ExitStack()
        chain: list[ToolRegistry] = []
        registry: ToolRegistry | None = self
        while registry is not None:
            chain.append(registry)
            registry = getattr(registry, "_base", None)
        for item in reversed(chain):
            stack.enter_context(item._lock)
        return stack

    def _rank(self, terms: Mapping[str, float], limit: int) -> list[tuple[float, str]]:
        with self._locked():
            return top_scores(layered_scores(self._layers(), terms), limit)

    def selection_report(self, kept: Iterable[str]) -> dict[str, int]:
        """``{"tools_total", "tools_kept", "schema_tokens_total", "schema_tokens_kept"}``."""
        return selection_report(self, kept)

    # -- diagnostics -----------------------------------------------------------------
    @staticmethod
    def validate_tool_info(info: Any) -> list[dict[str, str]]:
        """Diagnostics ``{tool, level, field, message}`` for a seeds ``tool_info`` dict."""
        return _validate_tool_info(info)

    def validate_tools(self) -> list[dict[str, str]]:
        """Diagnostics for every registered tool, plus names registered by distinct functions."""
        out: list[dict[str, str]] = []
        for item in self._tools.values():  # own layer only (an overlay adds its base's)
            out.extend(_diagnose(item))
        for name, funcs in self._funcs.items():
            if len(funcs) > 1:
                labels = ", ".join(_func_label(f) for f in funcs)
                out.append(
                    {
                        "tool": name,
                        "level": "error",
                        "field": "tool_name",
                        "message": f"registered by {len(funcs)} distinct functions ({labels}); the last one wins",
                    }
                )
        return out

    # -- seeds-compatible views -------------------------------------------------------
    @property
    def function_mappings(self) -> dict[str, Any]:
        """``{name: callable}`` (a snapshot; register through :meth:`register_tool`)."""
        return {t.name: t.func for t in self.tools()}

    @property
    def function_info(self) -> dict[str, dict[str, Any]]:
        """``{name: tool_info}`` (a snapshot)."""
        return {t.name: t.tool_info for t in self.tools()}

    @property
    def openai_function_schemas(self) -> list[dict[str, Any]]:
        """The seeds' attribute name for :meth:`schemas`."""
        return self.schemas()


class _Overlay(ToolRegistry):
    """Per-run tools layered over a base registry that stays untouched."""

    def __init__(self, base: ToolRegistry) -> None:
        super().__init__(strict=base.strict)
        self._base = base
        self._cache_key: tuple[int, int] | None = None

    def get(self, name: str) -> Tool | None:
        own = self._tools.get(name)
        return own if own is not None else self._base.get(name)

    def names(self) -> list[str]:
        return self._base.names() + [n for n in self._tools if n not in self._base]

    def tools(self) -> list[Tool]:
        return [t for t in (self.get(n) for n in self.names()) if t is not None]

    def __len__(self) -> int:
        return len(self._base) + sum(1 for n in self._tools if n not in self._base)

    def __contains__(self, name: object) -> bool:
        return name in self._tools or name in self._base

    def schemas(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        if names is not None:
            return super().schemas(names)
        key = (self._base._version, self._version)
        if self._schemas is None or self._cache_key != key:
            if any(n in self._base for n in self._tools):
                self._schemas = [t.openai_schema() for t in self.tools()]
            else:
                self._schemas = self._base.schemas() + [
                    t.openai_schema() for t in self._tools.values()
                ]
            self._cache_key = key
        return list(self._schemas)

    def schema_tokens(self, names: Iterable[str] | None = None) -> int:
        if names is not None:
            return super().schema_tokens(names)
        shadowed = sum(self._base._token_count(n) for n in self._tools if n in self._base)
        return self._base.schema_tokens() - shadowed + self._tokens_total

    def _token_count(self, name: str) -> int:
        if name in self._tools:
            return self._tokens[name]
        return self._base._token_count(name)

    def _layers(self) -> list[tuple[ToolIndex, Collection[str]]]:
        own = set(self._tools)
        below = [(index, own.union(hidden)) for index, hidden in self._base._layers()]
        return [*below, (self._ensure_index(), ())]

    def validate_tools(self) -> list[dict[str, str]]:
        out = self._base.validate_tools() + super().validate_tools()
        for name, item in self._tools.items():
            base_item = self._base.get(name)
            if base_item is not None and base_item.func is not item.func:
                out.append(
                    {
                        "tool": name,
                        "level": "warning",
                        "field": "tool_name",
                        "message": "a per-run tool shadows the registered tool of the same name",
                    }
                )
        return out
