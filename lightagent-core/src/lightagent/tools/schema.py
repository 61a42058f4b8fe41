"""JSON schemas for tools: from a function signature (pydantic) or a seeds ``tool_info``.

A function's parameters become a pydantic model built with ``create_model``; its JSON
schema, cleaned for chat APIs (``$ref`` inlined where not recursive, ``title`` noise
dropped), is what the model sees, and the same model validates the arguments before the
tool runs. pydantic is imported here only, on first use.
"""

from __future__ import annotations

import copy
import inspect
import json
import types
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ToolError
from lightagent.tools.argcheck import precoerce

__all__ = [
    "CONTEXT_TYPE_NAMES",
    "INJECTED_PARAMETERS",
    "FunctionSchema",
    "clean_schema",
    "function_schema",
    "tool_info_schema",
]

#: Parameters filled in by the runtime, never shown to or set by the model.
INJECTED_PARAMETERS = frozenset({"idempotency_key"})
#: A parameter annotated with a class of one of these names receives the run context.
CONTEXT_TYPE_NAMES = frozenset({"RunContext", "ToolContext"})
_SEEDS_KEYS = {"name", "type", "description", "required"}
_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}


@dataclass
class FunctionSchema:
    """What a signature gives: the JSON schema, its validator and how to call the function."""

    parameters: dict[str, Any]
    model: Any = None  #: the pydantic model validating arguments (None: plain JSON schema)
    fields: dict[str, str] = field(default_factory=dict)  #: model field -> parameter name
    injected: dict[str, str] = field(
        default_factory=dict
    )  #: parameter -> "idempotency_key"|"context"
    positional_only: tuple[str, ...] = ()
    accepts_kwargs: bool = False

    def validate(self, arguments: dict[str, Any]) -> tuple[dict, dict, list[str]]:
        """``(call kwargs, JSON-safe arguments, errors)`` for ``arguments``."""
        from pydantic import ValidationError as PydanticValidationError

        data = precoerce(self.parameters, arguments)
        try:
            instance = self.model.model_validate(data)
        except PydanticValidationError as exc:
            return {}, data, _pydantic_errors(exc)
        kwargs = {
            self.fields[name]: getattr(instance, name)
            for name in instance.model_fields_set
            if name in self.fields
        }
        if self.accepts_kwargs and instance.model_extra:
            kwargs.update(instance.model_extra)
        return kwargs, instance.model_dump(mode="json", exclude_unset=True, by_alias=True), []


def _pydantic_errors(exc: Any) -> list[str]:
    messages: list[str] = []
    for error in exc.errors(include_url=False)[:8]:
        path = ""
        for part in error.get("loc", ()):
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        kind = error.get("type", "")
        if kind == "missing":
            messages.append(f"missing required parameter `{path}`")
        elif kind == "extra_forbidden":
            messages.append(f"unknown parameter `{path}`")
        else:
            got = json.dumps(error.get("input"), ensure_ascii=False, default=str)
            got = got if len(got) <= 40 else got[:37] + "..."
            messages.append(f"`{path}`: {error.get('msg', 'invalid')}, got {got}")
    return messages


def _definition_error(func: Callable[..., Any], message: str, **details: Any) -> ToolError:
    name = getattr(func, "__name__", repr(func))
    return ToolError(
        "LA-TOOL-DEFINITION",
        f"tool {name!r}: {message}",
        details={"tool": name, **details},
        hint="Annotate each parameter with a JSON-friendly type (str, int, list[str], a pydantic model ...).",
    )


def _is_context_annotation(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return any(t in annotation for t in CONTEXT_TYPE_NAMES)
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    for candidate in (annotation, *typing.get_args(annotation)):
        if getattr(candidate, "__name__", None) in CONTEXT_TYPE_NAMES:
            return True
    return False


def _has_description(annotation: Any) -> bool:
    if typing.get_origin(annotation) is not typing.Annotated:
        return False
    return any(getattr(m, "description", None) for m in typing.get_args(annotation)[1:])


def _type_hints(
    func: Callable[..., Any], target: Any, signature: inspect.Signature
) -> dict[str, Any]:
    """Resolved hints; parameters that are injected need not resolve (TYPE_CHECKING imports)."""
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        pass
    hints: dict[str, Any] = {}
    namespace = getattr(target, "__globals__", {})
    for name, param in signature.parameters.items():
        annotation = param.annotation
        if not isinstance(annotation, str):
            hints[name] = annotation
            continue
        if name in INJECTED_PARAMETERS or any(t in annotation for t in CONTEXT_TYPE_NAMES):
            continue  # injected: its type is never needed
        shim = types.FunctionType((lambda: None).__code__, namespace)
        shim.__annotations__ = {name: annotation}
        try:
            hints.update(typing.get_type_hints(shim, include_extras=True))
        except Exception as exc:  # unresolved forward references and the like
            raise _definition_error(
                func, f"the type of {name!r} cannot be resolved: {exc}", parameter=name
            ) from None
    return hints


def function_schema(
    func: Callable[..., Any], param_docs: dict[str, str] | None = None
) -> FunctionSchema:
    """Build the argument model and JSON schema of ``func`` from its signature."""
    from pydantic import ConfigDict, Field, create_model

    param_docs = param_docs or {}
    target = inspect.unwrap(func)
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise _definition_error(func, f"no inspectable signature ({exc})") from None
    first = next(iter(signature.parameters), None)
    if first in ("self", "cls") and not inspect.ismethod(func):
        raise ToolError(
            "LA-TOOL-DEFINITION",
            f"tool {getattr(func, '__name__', func)!r} takes {first!r}: it is an unbound method",
            details={"tool": getattr(func, "__name__", repr(func))},
            hint="Make a tool of the bound method instead: tool(instance.method).",
        )
    hints = _type_hints(func, target, signature)

    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    injected: dict[str, str] = {}
    positional_only: list[str] = []
    accepts_kwargs = False
    for index, (name, param) in enumerate(signature.parameters.items()):
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_kwargs = True
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        annotation = hints.get(name, param.annotation)
        if name in INJECTED_PARAMETERS:
            injected[name] = name
            continue
        if annotation is not inspect.Parameter.empty and _is_context_annotation(annotation):
            injected[name] = "context"
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only.append(name)
        if annotation is inspect.Parameter.empty:
            default = param.default
            simple = (str, int, float, bool)
            annotation = type(default) if isinstance(default, simple) else Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        description = None if _has_description(annotation) else param_docs.get(name)
        # Field names are synthetic so that any parameter name (``json``, ``_x``,
        # ``model_config``) is legal; the alias is what the model sees.
        key = f"la_param_{index}"
        names[key] = name
        # Only a docstring description is passed: an explicit None would override one
        # given with Annotated[..., Field(description=...)].
        extra: dict[str, Any] = {"description": description} if description else {}
        fields[key] = (annotation, Field(default, alias=name, **extra))

    config = ConfigDict(
        extra="allow" if accepts_kwargs else "forbid",
        coerce_numbers_to_str=True,
        populate_by_name=False,
        arbitrary_types_allowed=False,
    )
    model_name = f"{getattr(func, '__name__', 'tool')}_arguments"
    try:
        model = create_model(model_name, __config__=config, **fields)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # non-JSON defaults are just left out
            raw = model.model_json_schema(by_alias=True)
    except Exception as exc:
        raise _definition_error(func, f"parameters cannot be described as JSON: {exc}") from None
    parameters = clean_schema(raw)
    parameters.setdefault("properties", {})
    parameters.setdefault("required", [])
    if accepts_kwargs:
        parameters.pop("additionalProperties", None)
    else:
        parameters["additionalProperties"] = False
    return FunctionSchema(
        parameters=parameters,
        model=model,
        fields=names,
        injected=injected,
        positional_only=tuple(positional_only),
        accepts_kwargs=accepts_kwargs,
    )


def _resolve(node: Any, defs: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_resolve(item, defs, stack) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        key = ref[len("#/$defs/") :]
        if key in defs and key not in stack:
            merged = {**copy.deepcopy(defs[key]), **{k: v for k, v in node.items() if k != "$ref"}}
            return _resolve(merged, defs, (*stack, key))
        return node  # recursive: keep the reference (and the $defs it needs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _resolve(sub, defs, stack) for name, sub in value.items()}
        elif key == "title" and isinstance(value, str):
            continue  # pydantic's generated titles only cost tokens
        elif key == "$defs":
            continue
        else:
            out[key] = _resolve(value, defs, stack)
    return out


def _uses_ref(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_uses_ref(v) for v in node.values())
    if isinstance(node, list):
        return any(_uses_ref(v) for v in node)
    return False


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with non-recursive ``$ref`` inlined and generated titles removed."""
    defs = schema.get("$defs") or {}
    cleaned = _resolve(schema, defs, ())
    if _uses_ref(cleaned):
        cleaned["$defs"] = {k: _resolve(v, defs, (k,)) for k, v in defs.items()}
    return cleaned


def tool_info_schema(info: dict[str, Any], *, accepts_kwargs: bool = False) -> dict[str, Any]:
    """The JSON schema of a seeds ``tool_info`` dict; extra keys of a param pass through."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in info.get("tool_params") or ():
        name = param["name"]
        prop: dict[str, Any] = {}
        kind = param.get("type", "string")
        if kind is not None:
            prop["type"] = kind
        if param.get("description"):
            prop["description"] = param["description"]
        for key, value in param.items():
            if key not in _SEEDS_KEYS:
                prop[key] = copy.deepcopy(value)
        properties[name] = prop
        if param.get("required") is True:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if not accepts_kwargs:
        schema["additionalProperties"] = False
    return schema


def json_types() -> frozenset[str]:
    """The JSON type names a ``tool_params`` entry may use."""
    return frozenset(_JSON_TYPES)
