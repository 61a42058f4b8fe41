"""``ConnectorManifest``: what a plugin declares it brings, checked by the validator.

A manifest is metadata only: building one never imports or activates anything. A plugin
returns it from the ``lightagent_manifest()`` hook, so it is part of the kernel's plugin
contract (a plugin needs no author kit at run time); ``lightagent validate-connector``
(from lightagent-contracts) compares it with what the plugin really registers.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

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
            problems = [
                {"field": ".".join(str(p) for p in err["loc"]), "error": err["msg"]}
                for err in exc.errors()
            ]
            text = "; ".join(f"{p['field']}: {p['error']}" for p in problems)
            raise ValidationError(
                "LA-VALIDATION",
                f"invalid connector manifest: {text}",
                hint="Fix the manifest fields named; see docs/writing-plugins.md.",
                details={"problems": problems},
            ) from None

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
