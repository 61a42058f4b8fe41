"""``FileSystem``: the roadmap's file-system provider protocol.

The roadmap (v0.10) names provider protocols for Model, Tool, FileSystem, Shell … In this
design every provider is a :class:`~lightagent_control.capabilities.CapabilityProvider` whose
``capabilities`` say what it can do; ``FileSystem`` marks one whose capabilities are file
operations, so a registry or a policy can ask ``isinstance(provider, FileSystem)``. The
skills' sandbox is where files are touched on behalf of the model (scripts run in a
temporary folder, references are read from their skill folder only).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from lightagent_control.capabilities import CapabilityProvider

__all__ = ["FileSystem"]


@runtime_checkable
class FileSystem(CapabilityProvider, Protocol):
    """A capability provider of file operations (a marker: the shape is the provider's)."""
