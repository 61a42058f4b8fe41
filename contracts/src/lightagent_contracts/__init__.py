"""lightagent-contracts: contract test suites and fixtures for lightagent plugin authors.

Installing it registers a pytest plugin (fixtures ``loopback_server``, ``scripted_model``,
``postgres_url``, ``postgres_outage``, ``no_network``); the base classes live in
:mod:`lightagent_contracts.suites`. It also carries the connector author's tooling
(:mod:`lightagent_contracts.connectors`: manifest, offline validator, scaffold) and
registers the ``lightagent validate-connector`` and ``lightagent new-plugin`` commands.
Names load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "LoopbackServer": "lightagent_contracts.loopback",
    "load_fixture": "lightagent_contracts.loopback",
    "block_network": "lightagent_contracts.network",
    "NetworkBlockedError": "lightagent_contracts.network",
    "OutageProxy": "lightagent_contracts.outage",
    "postgres_admin_url": "lightagent_contracts.postgres",
    "require_postgres": "lightagent_contracts.postgres",
    "Finding": "lightagent_contracts.connectors.findings",
    "ValidationReport": "lightagent_contracts.connectors.findings",
    "validate_connector": "lightagent_contracts.connectors.validate",
    "new_plugin": "lightagent_contracts.connectors.scaffold",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lightagent_contracts' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
