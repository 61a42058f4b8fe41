"""``Tool``, the ``@tool`` decorator and ``as_tool`` (which also reads seeds ``tool_info``)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, overload

from lightagent.errors import ToolError
from lightagent.models.arguments import ArgumentLimitError, load_arguments
from lightagent.tools.argcheck import check_arguments, schema_types
from lightagent.tools.diagnostics import diagnose_schema, validate_tool_info
from lightagent.tools.schema import (
    CONTEXT_TYPE_NAMES,
    INJECTED_PARAMETERS,
    FunctionSchema,
    function_schema,
    tool_info_schema,
)

__all__ = ["Tool", "as_tool", "tool"]

_DEFINITION_HINT = "Decorate the function with @tool, or give it a seeds-style tool_info dict."


def _callable_kind(func: Callable[..., Any]) -> str:
    call = getattr(func, "__call__", None)  # noqa: B004 - objects with an async __call__
    for candidate in (func, call):
        if candidate is None:
            continue
        if inspect.isasyncgenfunction(candidate):
            return "async_generator"
        if inspect.iscoroutinefunction(candidate):
            return "coroutine"
        if inspect.isgeneratorfunction(candidate):
            return "generator"
    return "function"


def _signature_facts(func: Callable[..., Any], exposed: set[str]) -> tuple[dict[str, str], bool]:
    """Injected parameters and whether ``**kwargs`` is accepted, for schema-less tools."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}, True
    injected: dict[str, str] = {}
    accepts_kwargs = False
    for name, param in params.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_kwargs = True
        elif name in exposed:
            continue
        elif name in INJECTED_PARAMETERS:
            injected[name] = name
        else:
            annotation = param.annotation
            text = (
                annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
            )
            if any(t in str(text) for t in CONTEXT_TYPE_NAMES):
                injected[name] = "context"
    return injected, accepts_kwargs


def _parse_arguments(name: str, arguments: Any) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, (bytes, bytearray)):
        arguments = arguments.decode("utf-8", "replace")
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            arguments = load_arguments(arguments)
        except ArgumentLimitError as exc:
            raise ToolError(
                "LA-TOOL-ARGS",
                f"arguments for `{name}`: {exc.msg}",
                hint="Send smaller, flatter arguments (limits in docs/tools.md).",
                details={"tool": name, "errors": [exc.msg]},
            ) from None
        except json.JSONDecodeError as exc:
            raise ToolError(
                "LA-TOOL-ARGS",
                f"arguments for `{name}` are not valid JSON ({exc.msg} at position {exc.pos})",
                details={"tool": name, "errors": [f"invalid JSON: {exc.msg}"]},
            ) from None
        if arguments is None:
            return {}
    if not isinstance(arguments, dict):
        raise ToolError(
            "LA-TOOL-ARGS",
            f"arguments for `{name}` must be a JSON object, got {type(arguments).__name__}",
            details={"tool": name, "errors": ["arguments must be a JSON object"]},
        )
    return arguments


@dataclass(eq=False)
class Tool:
    """A tool the model can call: its name, description, JSON schema and function.

    ``func`` may be sync, async, a generator or an async generator; ``is_async`` is
    derived. A ``Tool`` is callable like the function it wraps.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any]
    title: str | None = None
    timeout: float | None = None
    #: Parameters the runtime fills in (``idempotency_key``, a ``RunContext``); never in the schema.
    injected: dict[str, str] = field(default_factory=dict)
    #: Where the definition came from: "signature", "tool_info" or "schema".
    source: str = "schema"
    #: The pydantic-backed validator for signature tools.
    signature: FunctionSchema | None = field(default=None, repr=False)
    metadata: dict[str, Any] = field(default_factory=dict)
    is_async: bool = field(init=False)
    kind: str = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not isinstance(self.parameters, dict):
            raise ToolError(
                "LA-TOOL-DEFINITION",
                f"tool {self.name!r}: name must be a str and parameters a JSON-schema dict",
                hint=_DEFINITION_HINT,
            )
        if not isinstance(self.description, str):
            self.description = "" if self.description is None else str(self.description)
        if not callable(self.func):
            raise ToolError(
                "LA-TOOL-DEFINITION",
                f"tool {self.name!r}: func is not callable",
                hint=_DEFINITION_HINT,
            )
        if self.timeout is not None and (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, (int, float))
            or not self.timeout > 0
        ):
            raise ToolError(
                "LA-TOOL-DEFINITION",
                f"tool {self.name!r}: timeout must be a positive number of seconds, got {self.timeout!r}",
                hint="Pass timeout=<seconds> (e.g. 5.0) or leave it out.",
            )
        self.kind = _callable_kind(self.func)
        self.is_async = self.kind in ("coroutine", "async_generator")
        self._accepts_kwargs = self.signature.accepts_kwargs if self.signature else False
        if self.signature is None and self.source != "signature":
            exposed = set((self.parameters or {}).get("properties") or {})
            injected, self._accepts_kwargs = _signature_facts(self.func, exposed)
            self.injected = {**injected, **self.injected}
        self._openai: dict[str, Any] | None = None
        self._info: dict[str, Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def openai_schema(self) -> dict[str, Any]:
        """``{"type": "function", "function": {name, description, parameters}}`` (cached; read-only)."""
        if self._openai is None:
            self._openai = {
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": self.parameters,
                },
            }
        return self._openai

    @property
    def tool_info(self) -> dict[str, Any]:
        """The seeds' ``tool_info`` form of this tool."""
        if self._info is None:
            required = set(self.parameters.get("required") or ())
            params = []
            for name, prop in (self.parameters.get("properties") or {}).items():
                kinds = sorted(schema_types(prop) - {"null"})
                entry = {
                    "name": name,
                    "type": kinds[0] if len(kinds) == 1 else (kinds or "string"),
                    "description": prop.get("description", ""),
                    "required": name in required,
                }
                for key, value in prop.items():
                    if key not in ("type", "description", "anyOf", "default"):
                        entry[key] = value
                params.append(entry)
            self._info = {
                "tool_name": self.name,
                "tool_title": self.title or self.name,
                "tool_description": self.description,
                "tool_params": params,
            }
        return self._info

    def prepare_arguments(self, arguments: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(call kwargs, JSON-safe coerced arguments)``; raises ``ToolError("LA-TOOL-ARGS")``."""
        data = _parse_arguments(self.name, arguments)
        for name in self.injected:
            if name in data:
                raise ToolError(
                    "LA-TOOL-ARGS",
                    f"invalid arguments for `{self.name}`: `{name}` is set by the runtime, not the caller",
                    details={"tool": self.name, "errors": [f"unknown parameter `{name}`"]},
                )
        if self.signature is not None and self.signature.model is not None:
            kwargs, clean, errors = self.signature.validate(data)
        else:
            schema = self.parameters
            if self._accepts_kwargs and schema.get("additionalProperties") is False:
                schema = {k: v for k, v in schema.items() if k != "additionalProperties"}
            kwargs, errors = check_arguments(schema, data)
            clean = kwargs
        if errors:
            raise ToolError(
                "LA-TOOL-ARGS",
                f"invalid arguments for `{self.name}`: " + "; ".join(errors),
                details={"tool": self.name, "errors": errors},
            )
        return kwargs, clean

    def validate_arguments(self, arguments: Any) -> dict[str, Any]:
        """The keyword arguments to call ``func`` with; raises ``ToolError("LA-TOOL-ARGS")``."""
        return self.prepare_arguments(arguments)[0]

    def bind(self, kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Split validated kwargs into positional-only and keyword arguments."""
        positional_only = self.signature.positional_only if self.signature else ()
        if not positional_only:
            return [], kwargs
        rest = dict(kwargs)
        args = []
        for name in positional_only:
            if name not in rest:
                break
            args.append(rest.pop(name))
        return args, rest


def _raise_definition(diagnostics: list[dict[str, str]], what: str) -> None:
    errors = [d for d in diagnostics if d["level"] == "error"]
    if errors:
        text = "; ".join(f"{d['field']}: {d['message']}" for d in errors)
        raise ToolError(
            "LA-TOOL-DEFINITION",
            f"{what}: {text}",
            details={"diagnostics": diagnostics},
            hint="Fix the fields listed; ToolRegistry.validate_tool_info() checks a definition.",
        )


@overload
def tool(func: Callable[..., Any]) -> Tool: ...
@overload
def tool(
    func: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    timeout: float | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    timeout: float | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a :class:`Tool`; the schema comes from hints and docstring.

    Use bare (``@tool``) or with options (``@tool(name=..., timeout=5)``). Raises
    ``ToolError("LA-TOOL-DEFINITION")`` for a bad name or a parameter type that JSON
    cannot describe.
    """

    def build(fn: Callable[..., Any]) -> Tool:
        from lightagent.tools.docstrings import parse_docstring

        if isinstance(fn, Tool):
            fn = fn.func
        if not callable(fn):
            raise ToolError(
                "LA-TOOL-DEFINITION",
                f"@tool needs a function, got {type(fn).__name__}",
                hint=_DEFINITION_HINT,
            )
        docs = parse_docstring(inspect.getdoc(fn))
        schema = function_schema(fn, docs.params)
        built = Tool(
            name=name or str(getattr(fn, "__name__", type(fn).__name__)),
            description=description if description is not None else docs.description,
            parameters=schema.parameters,
            func=fn,
            title=title,
            timeout=timeout,
            injected=dict(schema.injected),
            source="signature",
            signature=schema,
        )
        _raise_definition(diagnose_schema(built), f"tool {built.name!r}")
        return built

    if func is not None:
        return build(func)
    return build


def from_tool_info(func: Callable[..., Any], info: Any, *, strict: bool = True) -> Tool:
    """A :class:`Tool` from a seeds-style callable and its ``tool_info`` dict."""
    if not callable(func):
        raise ToolError("LA-TOOL-DEFINITION", f"{func!r} is not callable", hint=_DEFINITION_HINT)
    diagnostics = validate_tool_info(info)
    name = info.get("tool_name") if isinstance(info, dict) else None
    if (
        strict
        or not isinstance(name, str)
        or not isinstance(info.get("tool_params", []) or [], list)
    ):
        _raise_definition(diagnostics, f"tool_info of {getattr(func, '__name__', func)!r}")
        if not isinstance(name, str):  # non-strict, but nothing to call it by
            _raise_definition(
                [{"level": "error", "field": "tool_name", "message": "missing"}], "tool_info"
            )
    usable = dict(info)
    usable["tool_params"] = [
        p
        for p in info.get("tool_params") or ()
        if isinstance(p, dict) and isinstance(p.get("name"), str)
    ]
    injected, accepts_kwargs = _signature_facts(func, {p["name"] for p in usable["tool_params"]})
    parameters = tool_info_schema(usable, accepts_kwargs=accepts_kwargs)
    description = info.get("tool_description")
    built = Tool(
        name=str(name),  # a str here: the checks above raised otherwise
        description=description if isinstance(description, str) else "",
        parameters=parameters,
        func=func,
        title=info.get("tool_title") if isinstance(info.get("tool_title"), str) else None,
        injected=injected,
        source="tool_info",
    )
    built._info = info
    return built


def as_tool(obj: Any, *, strict: bool = True, infer: bool = False) -> Tool:
    """``obj`` as a :class:`Tool`: a Tool, an ``@tool`` function, or a callable with ``tool_info``.

    With ``infer=True`` a plain typed function is accepted too (as if decorated).
    Anything else raises ``ToolError("LA-TOOL-DEFINITION")``.
    """
    if isinstance(obj, Tool):
        return obj
    info = getattr(obj, "tool_info", None)
    if info is not None and callable(obj):
        return from_tool_info(obj, info, strict=strict)
    if infer and callable(obj) and not isinstance(obj, type):
        return tool(obj)
    raise ToolError(
        "LA-TOOL-DEFINITION",
        f"{obj!r} is not a tool",
        details={"type": type(obj).__name__},
        hint=_DEFINITION_HINT,
    )
