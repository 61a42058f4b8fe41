"""Capabilities: what a provider can do, how risky it is, and a scoped registry of providers.

A provider declares :class:`CapabilitySpec` entries (read, write, network, execute,
persistence, risk L0-L3, timeout, output limit, approval). The
:class:`CapabilityRegistry` mounts providers in runtime, session or agent scope, resolves
a capability deterministically (agent > session > runtime > default; later wins at equal
scope, which :meth:`CapabilityRegistry.conflicts` reports) and routes every invocation
through the policy path.
"""

from __future__ import annotations

from lightagent_control.capability_registry import CapabilityRegistry
from lightagent_control.specs import (
    EFFECTS,
    BaseCapabilityProvider,
    CapabilityProvider,
    CapabilityRisk,
    CapabilityScope,
    CapabilitySpec,
    ProviderHealth,
    Registration,
)

__all__ = [
    "EFFECTS",
    "BaseCapabilityProvider",
    "CapabilityProvider",
    "CapabilityRegistry",
    "CapabilityRisk",
    "CapabilityScope",
    "CapabilitySpec",
    "ProviderHealth",
    "Registration",
]
