"""``ToolRegistry``: the tools an agent offers, their cached schemas and diagnostics."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from lightagent.errors import ToolError
from lightagent.keywords import seeds_keywords
from lightagent.tools.decorator import Tool, as_tool
from lightagent.tools.diagnostics import diagnose_schema
from lightagent.tools.diagnostics import validate_tool_info as _validate_tool_info
from lightagent.tools.selector import require_selector

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
    """Tools by name, with OpenAI schemas cached per tool.

    ``register_tool`` accepts a :class:`Tool`, an ``@tool`` function or a seeds-style
    callable with ``tool_info``; registering a name again replaces the earlier tool (and
    :meth:`validate_tools` reports it when the two came from different functions).
    Per-run tools go in a cheap overlay from :meth:`with_tools`, never into ``self``.
    """

    def __init__(self, tools: Iterable[Any] | None = None, *, strict: bool = True) -> None:
        self.strict = strict
        self._tools: dict[str, Tool] = {}
        self._funcs: dict[str, list[Any]] = {}
        self._schemas: list[dict[str, Any]] | None = None
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
        self._tools[item.name] = item
        funcs = self._funcs.setdefault(item.name, [])
        if not any(f is item.func for f in funcs):
            funcs.append(item.func)
        self._schemas = None
        self._version += 1

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
            self._funcs.pop(name, None)
            self._schemas = None
            self._version += 1
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

    # -- layers: what a tool selector indexes -----------------------------------------
    @property
    def version(self) -> int:
        """A number that changes whenever a tool of this layer is registered or removed."""
        return self._version

    def layers(self) -> list[ToolRegistry]:
        """This registry's layers, bottom first: itself, or an overlay's bases and then it."""
        return [self]

    def own_tools(self) -> dict[str, Tool]:
        """The tools registered on this layer itself (a snapshot; an overlay's base not included)."""
        with self._lock:
            return dict(self._tools)

    # -- selection: asks the registered tool selector (lightagent-selection) -----------
    def select(
        self,
        query: str,
        *,
        limit: int = 8,
        messages: Sequence[Mapping[str, Any]] | None = None,
        always: Iterable[str] = (),
    ) -> list[str]:
        """The names of the ``limit`` tools that best match ``query``, best first; ``always``
        names come first, outside the limit (``LA-MISSING-EXTRA`` with no selector installed)."""
        selector = require_selector("ToolRegistry.select")
        return selector.select(self, query, limit=limit, messages=messages, always=always)

    def offer(
        self,
        query: str,
        *,
        limit: int = 8,
        messages: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[str] | None:
        """The tools the loop offers one model request about ``query``, or None for all of them."""
        selector = require_selector("ToolRegistry.offer")
        return selector.offer(self, query, limit=limit, messages=messages or ())

    def selection_report(self, kept: Iterable[str]) -> dict[str, Any]:
        """``{"tools_total", "tools_kept", "schema_tokens_total", "schema_tokens_kept"}``."""
        return require_selector("ToolRegistry.selection_report").report(self, kept)

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

    def layers(self) -> list[ToolRegistry]:
        return [*self._base.layers(), self]

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
