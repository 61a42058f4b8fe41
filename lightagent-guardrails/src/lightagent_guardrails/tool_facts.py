"""What a tool does, as it declares it: MCP's hints, argument roles and the trust of its output.

The facts live in the tool's ``metadata`` (a ``Tool``'s, a toolset ``ToolDefinition``'s or a
plain mapping), under the names MCP uses, so an MCP server's tool annotations count as
they arrive:

* ``metadata["annotations"]``: ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
  ``openWorldHint`` (MCP's defaults when absent: not read-only, destructive, not
  idempotent, open world — a tool that says nothing is treated as one that acts);
* ``metadata["argument_roles"]``: argument name -> role (:data:`ROLES`);
* ``metadata["output_trust"]``: how far its output is trusted (a level of
  :data:`~lightagent_guardrails.provenance.TRUST_LEVELS`; ``third_party`` when absent,
  ``open_web`` for an open-world read that says nothing).

:func:`annotate` writes them onto a tool; :func:`facts_of` reads them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lightagent.errors import ConfigurationError

from lightagent_guardrails.provenance import TRUST_LEVELS

__all__ = ["CRITICAL_ROLES", "ROLES", "ToolFacts", "annotate", "facts_of"]

#: Argument roles. Critical ones decide where an action goes or how much it moves.
ROLES: frozenset[str] = frozenset(
    {
        "recipient",  # a person or address something is sent to
        "destination",  # where data is written or moved (a path, a channel, an account)
        "url",  # an address fetched or posted to
        "amount",  # a quantity of money or goods
        "account",  # an account acted on (credentials, an IBAN paid from or to)
        "target",  # the object a destructive action removes or changes
        "content",  # text carried along (a body, a message, a note)
        "query",  # a search text
        "selector",  # what a read picks (a file name, an id to look up)
    }
)
CRITICAL_ROLES: frozenset[str] = frozenset(
    {"recipient", "destination", "url", "amount", "account", "target"}
)


@dataclass(frozen=True)
class ToolFacts:
    """One tool's declared behaviour."""

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True
    roles: Mapping[str, str] = field(default_factory=dict)
    output_trust: str = "third_party"

    @property
    def acts(self) -> bool:
        """Whether calling it changes something (it is not read-only)."""
        return not self.read_only

    def critical_arguments(self) -> list[str]:
        """The arguments whose role is critical."""
        return [name for name, role in self.roles.items() if role in CRITICAL_ROLES]


def _metadata(tool: Any) -> Mapping[str, Any]:
    if isinstance(tool, Mapping):
        return tool
    meta = getattr(tool, "metadata", None)
    return meta if isinstance(meta, Mapping) else {}


def facts_of(tool: Any) -> ToolFacts:
    """The facts a tool (a ``Tool``, a ``ToolDefinition`` or its metadata mapping) declares."""
    meta = _metadata(tool)
    hints = meta.get("annotations")
    hints = hints if isinstance(hints, Mapping) else {}
    read_only = bool(hints.get("readOnlyHint", False))
    open_world = bool(hints.get("openWorldHint", True))
    trust = meta.get("output_trust")
    if trust not in TRUST_LEVELS:
        trust = "open_web" if (read_only and open_world and "output_trust" not in meta) else None
    roles = meta.get("argument_roles")
    return ToolFacts(
        read_only=read_only,
        destructive=bool(hints.get("destructiveHint", not read_only)),
        idempotent=bool(hints.get("idempotentHint", False)),
        open_world=open_world,
        roles=dict(roles) if isinstance(roles, Mapping) else {},
        output_trust=trust or "third_party",
    )


def annotate(
    tool: Any,
    *,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool | None = None,
    roles: Mapping[str, str] | None = None,
    output_trust: str | None = None,
) -> Any:
    """Write facts onto ``tool``'s metadata (MCP's hint names) and return the tool.

    Raises ``LA-CONFIG`` for an unknown role or trust level.
    """
    meta = getattr(tool, "metadata", None)
    if not isinstance(meta, dict):
        raise ConfigurationError("LA-CONFIG", f"{tool!r} has no metadata dict to annotate"[:200])
    hints = dict(meta.get("annotations") or {})
    for key, value in (
        ("readOnlyHint", read_only),
        ("destructiveHint", destructive),
        ("idempotentHint", idempotent),
        ("openWorldHint", open_world),
    ):
        if value is not None:
            hints[key] = bool(value)
    meta["annotations"] = hints
    if roles is not None:
        bad = sorted(set(roles.values()) - ROLES)
        if bad:
            raise ConfigurationError(
                "LA-CONFIG",
                f"unknown argument role(s) {', '.join(bad)}",
                hint=f"Use one of: {', '.join(sorted(ROLES))}.",
            )
        meta["argument_roles"] = {**dict(meta.get("argument_roles") or {}), **roles}
    if output_trust is not None:
        if output_trust not in TRUST_LEVELS:
            raise ConfigurationError(
                "LA-CONFIG",
                f"unknown trust level {output_trust!r}",
                hint=f"Use one of: {', '.join(TRUST_LEVELS)}.",
            )
        meta["output_trust"] = output_trust
    return tool
