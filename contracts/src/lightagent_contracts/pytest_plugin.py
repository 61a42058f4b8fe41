"""The pytest plugin of lightagent-contracts (entry point ``pytest11``).

It makes these fixtures available to any test suite that installs the package:
``loopback_server`` (a real OpenAI-wire HTTP server on 127.0.0.1), ``scripted_model``,
``postgres_url``, ``postgres_outage`` (a PostgreSQL outage on demand), ``no_network`` (and
the ini option ``lightagent_block_network``).
Contract base classes live in ``lightagent_contracts.suites``.
"""

from __future__ import annotations

from lightagent_contracts.fixtures import loopback_server, scripted_model  # noqa: F401
from lightagent_contracts.network import (  # noqa: F401
    lightagent_network_policy,
    no_network,
    pytest_addoption,
)
from lightagent_contracts.outage import postgres_outage  # noqa: F401
from lightagent_contracts.postgres import _postgres_database, postgres_url  # noqa: F401


def pytest_configure(config: object) -> None:
    """Register the ``slow`` marker the contract suites use (their thousands-of-examples tests)."""
    config.addinivalue_line(  # type: ignore[attr-defined]
        "markers", "slow: long contract tests (deselect with -m 'not slow')"
    )
