"""The plugin ecosystem: connector manifests, the offline validator and the plugin scaffold."""

from __future__ import annotations

from lightagent.manifest import ConnectorManifest

from lightagent_contracts.connectors.findings import FINDING_CODES, Finding, ValidationReport
from lightagent_contracts.connectors.validate import validate_connector

__all__ = [
    "FINDING_CODES",
    "ConnectorManifest",
    "Finding",
    "ValidationReport",
    "validate_connector",
]
