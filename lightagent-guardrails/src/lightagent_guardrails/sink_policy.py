"""The sink policy: decide on a tool call from the provenance of its critical arguments.

A *sink* is a call that acts (a tool that is not read-only), or an open-world read whose
address is an argument (a fetch of a URL built from untrusted text carries data out, and
takes the model where an attacker wants it). :func:`provenance_policy` builds the default
policy:

* a local read (read-only, closed world) is always allowed;
* an open-world read is refused when an argument with role ``url`` or ``destination``
  came only from untrusted content;
* an acting tool is refused when one of its critical arguments (recipient, destination,
  url, amount, account, target) came only from untrusted content. A tool that declares no
  roles has every argument treated as critical (fail closed);
* text arguments (role ``content``) may come from anywhere: what the user asked to be
  summarised and sent to a recipient the user named is fine — except a link only
  untrusted content held, which is not relayed (``relay_links=False``);
* an acting call none of whose values comes from the user's request or trusted data, while
  some came from untrusted content, is refused: nothing of it was asked for
  (``require_grounding=True``);
* a critical value found in no source (the model wrote it) is allowed by default
  (``on_unknown="allow"``); set it to ``"approval"`` or ``"block"`` to be stricter.

"Refused" is ``on_untrusted``: ``"block"`` (the model is told why, in one line) or
``"approval"`` (a human decides).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lightagent.errors import ConfigurationError

from lightagent_guardrails.answer_check import links_in
from lightagent_guardrails.provenance import Provenance, leaf_values
from lightagent_guardrails.tool_facts import CRITICAL_ROLES, ToolFacts

__all__ = ["SinkCall", "SinkPolicy", "SinkVerdict", "provenance_policy"]

_ACTIONS = ("allow", "block", "approval")


@dataclass(frozen=True)
class SinkCall:
    """One tool call as a sink policy sees it."""

    tool: str
    arguments: Mapping[str, Any]
    facts: ToolFacts
    provenance: Provenance


@dataclass(frozen=True)
class SinkVerdict:
    """``allow``, ``block`` or ``approval``, with a one-line reason for the last two."""

    action: str = "allow"
    reason: str | None = None

    @classmethod
    def allow(cls) -> SinkVerdict:
        """Let the call run."""
        return cls()


SinkPolicy = Callable[[SinkCall], "SinkVerdict | None"]


def _check(name: str, value: str) -> str:
    if value not in _ACTIONS:
        raise ConfigurationError(
            "LA-CONFIG", f"{name} must be one of {', '.join(_ACTIONS)}, got {value!r}"
        )
    return value


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def provenance_policy(
    *,
    on_untrusted: str = "block",
    on_unknown: str = "allow",
    critical_roles: Iterable[str] | None = None,
    relay_links: bool = False,
    require_grounding: bool = True,
) -> SinkPolicy:
    """The default sink policy (see the module docstring); returns ``policy(call)``.

    ``critical_roles`` defaults to :data:`CRITICAL_ROLES`."""
    _check("on_untrusted", on_untrusted)
    _check("on_unknown", on_unknown)
    # None rather than the frozenset as default: a set's repr changes order between runs
    critical = CRITICAL_ROLES if critical_roles is None else frozenset(critical_roles)

    def policy(call: SinkCall) -> SinkVerdict | None:
        facts = call.facts
        if facts.read_only:
            if not facts.open_world:
                return None
            watched = [n for n, r in facts.roles.items() if r in ("url", "destination")]
        elif facts.roles:
            watched = [n for n, r in facts.roles.items() if r in critical]
        else:
            watched = list(call.arguments)
        for name in watched:
            if name not in call.arguments:
                continue
            value = call.arguments[name]
            label = call.provenance.label(value)
            if label == "untrusted" and on_untrusted != "allow":
                where = ", ".join(o.describe() for o in call.provenance.untrusted_origins(value))
                reason = (
                    f"{name}={_short(value)} came only from untrusted content "
                    f"({where}), not from the user's request"
                )
                return SinkVerdict(on_untrusted, reason)
            if label == "unknown" and on_unknown != "allow":
                reason = (
                    f"{name}={_short(value)} is in no source of this run "
                    "(not in the user's request nor in any tool result)"
                )
                return SinkVerdict(on_unknown, reason)
        if facts.read_only or on_untrusted == "allow":
            return None
        prov = call.provenance
        if not relay_links:
            for name, value in call.arguments.items():
                for text in leaf_values(value):
                    for link in links_in(str(text)):
                        origins = prov.origins_of(link)
                        if origins and not any(o.trusted for o in origins):
                            reason = (
                                f"{name} carries the link {_short(link)}, which only "
                                "untrusted content held; it is not passed on"
                            )
                            return SinkVerdict(on_untrusted, reason)
        if require_grounding:
            labels = {name: prov.label(value) for name, value in call.arguments.items()}
            tainted = [n for n, label in labels.items() if label == "untrusted"]
            if tainted and "trusted" not in labels.values():
                name = tainted[0]
                reason = (
                    f"nothing in this call comes from the user's request or trusted data, and "
                    f"{name}={_short(call.arguments[name])} came only from untrusted content"
                )
                return SinkVerdict(on_untrusted, reason)
        return None

    policy.__name__ = "provenance_policy"
    return policy
