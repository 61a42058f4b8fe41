"""The plugin ecosystem: connector manifests, the offline validator and the plugin scaffold."""

from __future__ import annotations

from lightagent.connectors.findings import FINDING_CODES, Finding, ValidationReport
from lightagent.connectors.manifest import ConnectorManifest
from lightagent.connectors.validate import validate_connector

__all__ = [
    "FINDING_CODES",
    "ConnectorManifest",
    "Finding",
    "ValidationReport",
    "validate_connector",
]
