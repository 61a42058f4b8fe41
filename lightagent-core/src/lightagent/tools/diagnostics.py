"""Diagnostics for tool definitions: ``{tool, level, field, message}`` dicts.

``level`` is ``"error"`` (the definition will be rejected by providers or cannot be
called) or ``"warning"`` (it works, but the model is likely to misuse it).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Protocol

__all__ = ["TOOL_NAME_PATTERN", "diagnose_schema", "fit_tool_name", "validate_tool_info"]

#: What OpenAI (and most compatible servers) accept as a function name.
TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def fit_tool_name(name: str) -> tuple[str | None, str | None]:
    """``(the name a model may see, why it differs from name)`` for a name from elsewhere.

    A valid name is kept. Characters outside ``[A-Za-z0-9_-]`` become ``_`` and a name over
    64 characters is cut, with a hash of the whole name so that cut names stay distinct.
    A name with invisible or control characters (a right-to-left override, a zero-width
    space) is refused, ``(None, reason)``: such characters only serve to disguise a name.
    """
    if TOOL_NAME_PATTERN.fullmatch(name):
        return name, None
    hidden = [c for c in name if not c.isprintable()]
    if hidden:
        codes = ", ".join(sorted({f"U+{ord(c):04X}" for c in hidden}))
        return None, f"the name holds invisible or control characters ({codes})"
    fixed = _UNSAFE.sub("_", name).strip("_")
    if not fixed:
        return None, "the name has no character a model API accepts ([A-Za-z0-9_-])"
    if len(fixed) > 64:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        fixed = f"{fixed[:55]}_{digest}"
    return fixed, "a tool name must match [A-Za-z0-9_-]{1,64}"


class _Schema(Protocol):
    """What the checks read of a tool (a :class:`~lightagent.tools.decorator.Tool`)."""

    name: str
    description: str
    parameters: dict[str, Any]


_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}


def _diag(tool: str, level: str, field: str, message: str) -> dict[str, str]:
    return {"tool": tool, "level": level, "field": field, "message": message}


def _check_name(tool: str, name: Any, field: str) -> list[dict[str, str]]:
    if not isinstance(name, str) or not name:
        return [_diag(tool, "error", field, "the tool name is missing or not a string")]
    if not TOOL_NAME_PATTERN.fullmatch(name):
        return [
            _diag(
                tool,
                "error",
                field,
                f"tool name {name!r} must match [A-Za-z0-9_-]{{1,64}} (letters, digits, _ and -)",
            )
        ]
    return []


def _check_type(tool: str, kind: Any, field: str) -> list[dict[str, str]]:
    kinds = kind if isinstance(kind, list) else [kind]
    bad = [k for k in kinds if k not in _JSON_TYPES]
    if bad or not kinds:
        allowed = ", ".join(sorted(_JSON_TYPES))
        return [_diag(tool, "error", field, f"type {kind!r} is not a JSON type ({allowed})")]
    return []


def validate_tool_info(info: Any) -> list[dict[str, str]]:
    """Diagnostics for a seeds ``tool_info`` dict (an empty list means it is fine)."""
    if not isinstance(info, dict):
        return [_diag("<unknown>", "error", "tool_info", "tool_info must be a dict")]
    raw_name = info.get("tool_name")
    tool = raw_name if isinstance(raw_name, str) and raw_name else "<unnamed>"
    out = _check_name(tool, raw_name, "tool_name")
    title = info.get("tool_title")
    if title is not None and not isinstance(title, str):
        out.append(_diag(tool, "warning", "tool_title", "tool_title should be a string"))
    description = info.get("tool_description")
    if description is not None and not isinstance(description, str):
        out.append(_diag(tool, "error", "tool_description", "tool_description must be a string"))
    elif not (description or "").strip():
        out.append(
            _diag(
                tool,
                "warning",
                "tool_description",
                "no description: the model cannot tell when to use it",
            )
        )
    params = info.get("tool_params", [])
    if params is None:
        params = []
    if not isinstance(params, list):
        out.append(_diag(tool, "error", "tool_params", "tool_params must be a list of dicts"))
        return out
    seen: set[str] = set()
    for i, param in enumerate(params):
        field = f"tool_params[{i}]"
        if not isinstance(param, dict):
            out.append(_diag(tool, "error", field, "each parameter must be a dict"))
            continue
        name = param.get("name")
        if not isinstance(name, str) or not _PARAM_NAME.fullmatch(name):
            out.append(
                _diag(
                    tool, "error", f"{field}.name", f"parameter name {name!r} must be an identifier"
                )
            )
        elif name in seen:
            out.append(
                _diag(tool, "error", f"{field}.name", f"parameter {name!r} is declared twice")
            )
        else:
            seen.add(name)
        if "type" not in param:
            out.append(
                _diag(tool, "warning", f"{field}.type", "no type given; 'string' is assumed")
            )
        else:
            out.extend(_check_type(tool, param["type"], f"{field}.type"))
        if not (isinstance(param.get("description"), str) and param["description"].strip()):
            out.append(
                _diag(tool, "warning", f"{field}.description", "parameter has no description")
            )
        if "required" in param and not isinstance(param["required"], bool):
            out.append(_diag(tool, "error", f"{field}.required", "required must be true or false"))
        if param.get("type") == "array" and "items" not in param:
            out.append(
                _diag(
                    tool,
                    "warning",
                    f"{field}.items",
                    "array without items: some providers reject it",
                )
            )
        if "enum" in param and not isinstance(param["enum"], list):
            out.append(_diag(tool, "error", f"{field}.enum", "enum must be a list"))
    return out


def diagnose_schema(tool: _Schema) -> list[dict[str, str]]:
    """Diagnostics for a :class:`Tool` built from a signature or a raw JSON schema."""
    out = _check_name(tool.name, tool.name, "name")
    if not tool.description.strip():
        out.append(
            _diag(
                tool.name,
                "warning",
                "description",
                "no description: the model cannot tell when to use it",
            )
        )
    params = tool.parameters
    if not isinstance(params, dict) or params.get("type") != "object":
        out.append(
            _diag(
                tool.name, "error", "parameters", "parameters must be a JSON schema of type object"
            )
        )
        return out
    for name, prop in (params.get("properties") or {}).items():
        field = f"parameters.{name}"
        if not isinstance(prop, dict):
            out.append(_diag(tool.name, "error", field, "a property schema must be a dict"))
            continue
        if not prop:
            out.append(_diag(tool.name, "warning", field, "no type: annotate the parameter"))
        if "type" in prop:
            out.extend(_check_type(tool.name, prop["type"], f"{field}.type"))
        if not (isinstance(prop.get("description"), str) and prop["description"].strip()):
            out.append(
                _diag(tool.name, "warning", f"{field}.description", "parameter has no description")
            )
    return out
