"""Check (and gently coerce) tool arguments against a JSON schema, without pydantic.

Used for tools whose schema is a plain dict: the seeds' ``tool_info`` callables and tools
that providers (MCP, connectors) build. It covers what tool schemas use in practice:
``type`` (one or a list), ``enum``, ``const``, ``properties``/``required``/
``additionalProperties``, ``items``, ``anyOf``/``oneOf``/``allOf``, numeric and length
bounds, and local ``$ref``s (``#/$defs/...``, ``#/definitions/...``, any ``#/`` pointer),
recursive ones included; a reference that cannot be followed, or that loops without
reaching a schema, is an error (a value it should constrain is never let through unchecked).

Coercions, chosen for the mistakes models make most (the same for pydantic tools):
``"3"`` → 3 for integer, ``"2.5"`` → 2.5 for number, ``"true"``/``"false"`` → bool,
a number → its text for string, a JSON text → the list/object for array/object params,
and ``null`` for an optional parameter that does not admit null → left out (its default).
"""

from __future__ import annotations

import json
import math
from typing import Any

from lightagent.errors import ToolError
from lightagent.models.arguments import ArgumentLimitError, load_arguments

__all__ = ["check_arguments", "precoerce", "schema_types"]

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}
_MAX_ERRORS = 8


def schema_types(schema: Any) -> set[str]:
    """The JSON types a schema admits (``set()`` means anything)."""
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    found: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or ():
            sub_types = schema_types(sub)
            if not sub_types:
                return set()
            found |= sub_types
    return found


def _is_type(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer() and math.isfinite(value)
    return isinstance(value, _PY_TYPES.get(kind, (object,)))


def _coerce(value: Any, kinds: set[str]) -> Any:
    """The value converted to one of ``kinds`` when a lax reading allows it."""
    if not kinds or any(_is_type(value, k) for k in kinds):
        if "integer" in kinds and isinstance(value, float) and "number" not in kinds:
            return int(value)
        return value
    if isinstance(value, str):
        text = value.strip()
        if "integer" in kinds:
            try:
                return int(text)
            except ValueError:
                pass
        if "number" in kinds:
            try:
                number = float(text)
                if math.isfinite(number):
                    return number
            except ValueError:
                pass
        if "boolean" in kinds and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if kinds & {"array", "object"} and text[:1] in "[{":
            try:
                decoded = load_arguments(text)
            except ArgumentLimitError as exc:  # JSON inside a string counts against the limits
                raise ToolError("LA-TOOL-ARGS", exc.msg, details={"errors": [exc.msg]}) from None
            except ValueError:
                return value
            if any(_is_type(decoded, k) for k in kinds):
                return decoded
    elif "string" in kinds and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _pointer(root: Any, ref: str) -> Any:
    """The schema ``ref`` (a local JSON pointer) names in ``root``; None when there is none."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None  # remote or relative: not ours to fetch
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node if isinstance(node, dict) else None


def precoerce(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Top-level lax fixes before validation (JSON-text lists, numbers for strings, nulls)."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        prop = properties.get(name)
        if prop is None:
            out[name] = value
            continue
        if isinstance(prop, dict) and isinstance(prop.get("$ref"), str):
            prop = _pointer(schema, prop["$ref"]) or prop
        kinds = schema_types(prop)
        if value is None and name not in required and kinds and "null" not in kinds:
            continue  # a model's way of saying "not given": use the default
        if isinstance(value, str) and kinds & {"array", "object"}:
            value = _coerce(value, kinds)
        out[name] = value
    return out


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


class _Checker:
    def __init__(self, root: Any = None) -> None:
        self.errors: list[str] = []
        self.root = root
        #: References followed at the current value without descending into it (a loop guard).
        self.following: set[str] = set()

    def fail(self, path: str, message: str) -> None:
        if len(self.errors) < _MAX_ERRORS:
            self.errors.append(f"`{path}`: {message}" if path else message)

    def follow(self, ref: Any, value: Any, path: str) -> Any:
        target = _pointer(self.root, ref) if isinstance(ref, str) else None
        if target is None or ref in self.following:
            self.fail(path, f"cannot check the schema reference {ref!r}")
            return value
        self.following.add(ref)
        try:
            return self.check(target, value, path)
        finally:
            self.following.discard(ref)

    def check(self, schema: Any, value: Any, path: str) -> Any:
        if not isinstance(schema, dict) or not schema:
            return value
        if "$ref" in schema:
            value = self.follow(schema["$ref"], value, path)
        for sub_schema in schema.get("allOf") or ():
            value = self.check(sub_schema, value, path)
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if options:
                for option in options:
                    sub = _Checker(self.root)
                    sub.following = set(self.following)
                    result = sub.check(option, value, path)
                    if not sub.errors:
                        value = result
                        break
                else:
                    self.fail(path, f"{_describe(value)} matches none of the allowed shapes")
                    return value
        kinds = schema_types(schema) if "type" in schema else set()
        if kinds:
            value = _coerce(value, kinds)
            if not any(_is_type(value, k) for k in kinds):
                expected = "` or `".join(sorted(kinds))
                self.fail(path, f"expected `{expected}`, got {_describe(value)}")
                return value
        if "enum" in schema and value not in schema["enum"]:
            allowed = ", ".join(_describe(v) for v in schema["enum"][:12])
            self.fail(path, f"{_describe(value)} is not one of: {allowed}")
        if "const" in schema and value != schema["const"]:
            self.fail(path, f"must be {_describe(schema['const'])}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                self.fail(path, f"must be >= {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                self.fail(path, f"must be <= {schema['maximum']}")
        if isinstance(value, str):
            if "minLength" in schema and len(value) < schema["minLength"]:
                self.fail(path, f"must have at least {schema['minLength']} characters")
            if "maxLength" in schema and len(value) > schema["maxLength"]:
                self.fail(path, f"must have at most {schema['maxLength']} characters")
        if isinstance(value, (list, tuple)):
            value = list(value)
            if "minItems" in schema and len(value) < schema["minItems"]:
                self.fail(path, f"needs at least {schema['minItems']} items")
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                self.fail(path, f"allows at most {schema['maxItems']} items")
            items = schema.get("items")
            if isinstance(items, dict):
                value = [self.child(items, v, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict) and ("properties" in schema or "required" in schema):
            value = self.check_object(schema, value, path)
        return value

    def child(self, schema: Any, value: Any, path: str) -> Any:
        """Check a value inside the current one: references may be followed afresh."""
        if not self.following:
            return self.check(schema, value, path)
        outer, self.following = self.following, set()
        try:
            return self.check(schema, value, path)
        finally:
            self.following = outer

    def check_object(self, schema: dict[str, Any], value: dict[str, Any], path: str) -> dict:
        properties = schema.get("properties") or {}
        prefix = f"{path}." if path else ""
        for name in schema.get("required") or ():
            if name not in value:
                self.fail("", f"missing required parameter `{prefix}{name}`")
        out: dict[str, Any] = {}
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in properties:
                out[name] = self.child(properties[name], item, f"{prefix}{name}")
            elif extra is False:
                known = ", ".join(properties) or "none"
                self.fail("", f"unknown parameter `{prefix}{name}` (known: {known})")
            else:
                out[name] = (
                    self.child(extra, item, f"{prefix}{name}") if isinstance(extra, dict) else item
                )
        return out


#: Exact Python types of plain JSON types (bool is not an int here, as in ``_is_type``).
_EXACT: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}
_PLAIN_KEYS = frozenset({"type", "description", "title"})


def _already_fit(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """Whether every argument is a known property of one plain type, already of that type,
    and no required one is missing: nothing to coerce or report (the usual call)."""
    properties = schema.get("properties")
    if not properties:
        return False
    for name in schema.get("required") or ():
        if name not in arguments:
            return False
    for name, value in arguments.items():
        prop = properties.get(name)
        if type(prop) is not dict or not prop.keys() <= _PLAIN_KEYS:
            return False
        kind = prop.get("type")
        exact = _EXACT.get(kind) if type(kind) is str else None
        if exact is None or type(value) not in exact:
            return False
    return True


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> tuple[dict, list[str]]:
    """``(coerced arguments, errors)``; ``errors`` is empty when the arguments fit."""
    if _already_fit(schema, arguments):
        return dict(arguments), []
    checker = _Checker(schema)
    value = checker.check_object(schema, precoerce(schema, arguments), "")
    return value, checker.errors
