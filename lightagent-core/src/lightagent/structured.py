"""Structured output: ``run(..., output_schema=<pydantic model>)``.

Where the provider profile supports JSON-schema response formats, the model is asked
with ``response_format={"type": "json_schema", ...}``; elsewhere it must call a tool
whose parameters are the schema. The answer is validated; one repair round sends the
validation error back to the model.
"""

from __future__ import annotations

import re
from typing import Any

from lightagent.errors import ConfigurationError

__all__ = ["OutputSpec", "output_spec"]

_NAME = re.compile(r"[^A-Za-z0-9_-]")
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.S)


class OutputSpec:
    """How one run asks for, and checks, a structured answer."""

    def __init__(self, schema: type, *, via_tool: bool, forced: bool = True) -> None:
        from pydantic import BaseModel

        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise ConfigurationError(
                "LA-CONFIG",
                f"output_schema must be a pydantic BaseModel subclass, got {schema!r}",
                hint="Define `class Answer(BaseModel): ...` and pass output_schema=Answer.",
            )
        self.schema = schema
        self.via_tool = via_tool
        #: Whether ``tool_choice`` may force the answer tool (thinking modes refuse it).
        self.forced = forced
        self.name = _NAME.sub("_", schema.__name__)[:64] or "final_answer"
        self.json_schema: dict[str, Any] = schema.model_json_schema()

    def response_format(self) -> dict[str, Any]:
        """The ``response_format`` of a JSON-schema request."""
        return {
            "type": "json_schema",
            "json_schema": {"name": self.name, "schema": self.json_schema},
        }

    def tool_schema(self) -> dict[str, Any]:
        """The tool the model must call with its answer (profiles without JSON schema)."""
        description = (
            self.schema.__doc__ or ""
        ).strip() or f"Give the final answer as {self.name}."
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": description,
                "parameters": self.json_schema,
            },
        }

    def tool_choice(self) -> dict[str, Any]:
        """A ``tool_choice`` forcing :meth:`tool_schema`."""
        return {"type": "function", "function": {"name": self.name}}

    def validate(self, text: Any) -> tuple[Any, str | None]:
        """``(model instance, None)`` or ``(None, a short description of what is wrong)``."""
        from pydantic import ValidationError as PydanticValidationError

        if isinstance(text, dict):
            try:
                return self.schema.model_validate(text), None
            except PydanticValidationError as exc:
                return None, _describe(exc)
        raw = text or ""
        match = _FENCE.match(raw)
        if match:
            raw = match.group(1)
        try:
            return self.schema.model_validate_json(raw), None
        except PydanticValidationError as exc:
            return None, _describe(exc)

    @staticmethod
    def dump(parsed: Any) -> str:
        """The JSON text of a validated answer (``RunResult.content``)."""
        return parsed.model_dump_json()

    def repair_message(self, problem: str) -> dict[str, Any]:
        """The user message asking for a corrected answer."""
        return {
            "role": "user",
            "content": (
                f"Your answer does not match the required JSON schema {self.name}: {problem}\n"
                "Answer again with only a JSON object that matches the schema."
            ),
        }


def output_spec(schema: Any, model: Any) -> OutputSpec:
    """An :class:`OutputSpec` for ``schema``, using JSON-schema requests where ``model``'s profile allows."""
    profile = getattr(model, "profile", None)
    native = bool(getattr(profile, "supports_json_schema", False))
    extra = getattr(profile, "extra", None)
    forced = not (isinstance(extra, dict) and extra.get("forced_tool_choice") is False)
    return OutputSpec(schema, via_tool=not native, forced=forced)


def _describe(exc: Any) -> str:
    parts = []
    for error in exc.errors()[:8]:
        where = ".".join(str(p) for p in error.get("loc", ())) or "(root)"
        parts.append(f"{where}: {error.get('msg')}")
    return "; ".join(parts)
