"""``ConnectorManifest``: what a plugin declares it brings, checked by the validator.

A manifest is metadata only: building one never imports or activates anything. A plugin
returns it from the ``lightagent_manifest()`` hook, so it is part of the kernel's plugin
contract (a plugin needs no author kit at run time); ``lightagent validate-connector``
(from lightagent-contracts) compares it with what the plugin really registers.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from lightagent.errors import ValidationError

__all__ = ["MANIFEST_NAME_PATTERN", "ConnectorManifest"]

#: Distribution-style names: a letter first, then letters, digits, ``.``, ``_`` or ``-``.
MANIFEST_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9._-]*$"

# PEP 440 public versions, the shape every published distribution has.
_VERSION = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[A-Za-z0-9.]+)?$")


class ConnectorManifest(BaseModel):
    """What a plugin brings: tools, skills, MCP servers, hooks, providers, extras and docs.

    ``providers`` maps a registry kind (``"model"``, ``"memory"``, ``"retrieval"`` …) to
    the provider names the plugin registers; ``tools`` lists tool names; ``mcp_servers``
    uses the seeds' ``mcpServers`` shape; ``extras`` names optional-dependency extras of the
    distribution and their requirement strings; ``core_requires`` is the
    ``lightagent-core`` range the plugin supports (PEP 440 specifiers).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str = Field(pattern=MANIFEST_NAME_PATTERN, max_length=100)
    version: str
    description: str = ""
    tools: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    hooks: tuple[str, ...] = ()
    memory_adapters: tuple[str, ...] = ()
    providers: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, validation_alias=AliasChoices("providers", "provides")
    )
    commands: tuple[str, ...] = ()
    extras: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    docs: tuple[str, ...] = ()
    core_requires: str | None = None
    homepage: str | None = None
    # The seeds' manifests carry component objects; their names become the fields above and
    # what an inspection (never a call) found wrong with them is kept for the validator.
    _component_problems: tuple[dict[str, str], ...] = PrivateAttr(default=())
    _components: tuple[tuple[str, str, Any], ...] = PrivateAttr(default=())

    def __init__(self, *args: Any, **data: Any) -> None:
        """Keywords, or the seeds' form: ``name`` and ``version`` (and ``description``)
        positionally, and tools, hooks, skills and memory adapters as the objects themselves."""
        if len(args) > 3:
            raise ValidationError(
                "LA-VALIDATION",
                "ConnectorManifest takes at most name, version, description positionally",
                hint="Pass the other fields as keywords (tools=..., hooks=...).",
            )
        for key, value in zip(("name", "version", "description"), args, strict=False):
            if key in data:
                raise ValidationError(
                    "LA-VALIDATION",
                    f"ConnectorManifest got {key!r} twice",
                    hint="Give it positionally or as a keyword, not both.",
                )
            data[key] = value
        problems: list[dict[str, str]] = []
        components: list[tuple[str, str, Any]] = []
        for key in ("tools", "hooks", "skills", "memory_adapters"):
            if key in data:
                data[key] = _component_names(key, data[key], problems, components)
        from pydantic import ValidationError as PydanticError

        try:
            super().__init__(**data)
        except PydanticError as exc:
            raise _invalid(exc) from None
        self._component_problems = tuple(problems)
        self._components = tuple(components)

    @property
    def component_problems(self) -> tuple[dict[str, str], ...]:
        """``{field, component, message}`` for each component object that lacks what its
        kind needs (found by inspection only; empty for a manifest of names)."""
        return self._component_problems

    @property
    def components(self) -> tuple[tuple[str, str, Any], ...]:
        """``(field, name, object)`` for each component given as an object, so a validator
        can read its source (empty for a manifest of names; never serialised)."""
        return self._components

    @field_validator(
        "tools", "skills", "hooks", "memory_adapters", "commands", "docs", mode="before"
    )
    @classmethod
    def _one_is_a_list(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @field_validator("providers", "extras", mode="before")
    @classmethod
    def _one_per_key_is_a_list(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (v,) if isinstance(v, str) else v for k, v in value.items()}
        return value

    @field_validator("version")
    @classmethod
    def _check_version(cls, value: str) -> str:
        if not _VERSION.match(value):
            raise ValueError(f"{value!r} is not a PEP 440 version such as 0.1.0")
        return value

    @field_validator("core_requires")
    @classmethod
    def _check_core_requires(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(value)
        except InvalidSpecifier as exc:
            raise ValueError(f"{value!r} is not a version range such as >=0.1,<0.2") from exc
        return value

    @classmethod
    def from_any(cls, value: Any) -> ConnectorManifest:
        """A manifest from a manifest, a dict of its fields or an object with ``model_dump``.

        Raises :class:`lightagent.errors.ValidationError` (``LA-VALIDATION``) naming every
        invalid field.
        """
        if isinstance(value, cls):
            return value
        if hasattr(value, "model_dump") and not isinstance(value, dict):
            value = value.model_dump()
        if not isinstance(value, dict):
            raise ValidationError(
                "LA-VALIDATION",
                f"a connector manifest must be a ConnectorManifest or a dict, not {type(value).__name__}",
                hint="Return ConnectorManifest(name=..., version=...) from lightagent_manifest().",
            )
        from pydantic import ValidationError as PydanticError

        try:
            return cls.model_validate(value)
        except PydanticError as exc:
            raise _invalid(exc) from None

    def declared(self) -> dict[str, tuple[str, ...]]:
        """Every declared name by registry kind (tools under ``"tool"``, hooks under ``"hook"`` …)."""
        out: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in self.providers.items()}
        for kind, names in (
            ("tool", self.tools),
            ("hook", self.hooks),
            ("memory", self.memory_adapters),
        ):
            if names:
                out[kind] = tuple(dict.fromkeys((*out.get(kind, ()), *names)))
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of the fields."""
        return self.model_dump(mode="json")


def _invalid(exc: Any) -> ValidationError:
    """``LA-VALIDATION`` naming every field pydantic refused."""
    problems = [
        {"field": ".".join(str(p) for p in err["loc"]), "error": err["msg"]} for err in exc.errors()
    ]
    text = "; ".join(f"{p['field']}: {p['error']}" for p in problems)
    return ValidationError(
        "LA-VALIDATION",
        f"invalid connector manifest: {text}",
        hint="Fix the fields named; `lightagent new-plugin NAME` (pip install lightagent-contracts) writes a manifest that passes.",
        details={"problems": problems},
    )


_PHASE_METHODS = ("on_phase", "on_phase_sync", "before_run", "after_run", "before_tool_call")


def _component_name(value: Any) -> str:
    info = getattr(value, "tool_info", None)
    if isinstance(info, dict) and isinstance(info.get("tool_name"), str):
        return info["tool_name"]
    for attr in ("name", "__name__"):
        name = getattr(value, attr, None)
        if isinstance(name, str) and name:
            return name
    return type(value).__name__


def _component_names(
    key: str, value: Any, problems: list[dict[str, str]], components: list[tuple[str, str, Any]]
) -> Any:
    """Names for ``value`` (a list of names or objects, or a ``{name: object}`` dict)."""
    if isinstance(value, str) or value is None:
        return value
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    names: list[Any] = []
    for given, item in items:
        if isinstance(item, (str, type(None))) and given is None:
            names.append(item)  # a name (or None, which the field check reports)
            continue
        name = given if isinstance(given, str) else _component_name(item)
        names.append(name)
        components.append((key, name, item))
        problem = _inspect(key, item)
        if problem:
            problems.append({"field": key, "component": name, "message": problem})
    return tuple(names)


def _inspect(key: str, obj: Any) -> str | None:
    # Attributes only: nothing is called, imported or activated.
    if obj is None or isinstance(obj, str):
        return None
    if key == "tools":
        is_tool = type(obj).__name__ == "Tool" or isinstance(getattr(obj, "tool_info", None), dict)
        if not callable(obj):
            return "a tool must be callable"
        return None if is_tool else "a tool needs a tool_info dict (or @tool)"
    if key == "hooks":
        if callable(obj) or any(callable(getattr(obj, m, None)) for m in _PHASE_METHODS):
            return None
        return "a hook must be callable or have a phase method (on_phase, before_run, ...)"
    if key == "memory_adapters":
        missing = [m for m in ("store", "retrieve") if not callable(getattr(obj, m, None))]
        return f"a memory adapter needs {' and '.join(missing)}()" if missing else None
    return None
