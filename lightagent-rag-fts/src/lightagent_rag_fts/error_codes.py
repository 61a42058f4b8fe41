"""The codes of the full-text retrieval provider.

Registered with lightagent through the ``lightagent.error_codes`` entry point (see
``pyproject.toml``), so ``LightAgentError``, ``ERROR_TAXONOMY`` and ``format_error_code``
know them. Codes are public and stable: add rows freely, never rename or reuse a code;
each is documented in ``docs/errors.md`` (a test fails when one is missing).
"""

from __future__ import annotations

from lightagent.error_codes import Row

__all__ = ["CODES"]

# fmt: off
CODES: tuple[Row, ...] = (
    ("LA-RETRIEVAL-TENANT", "policy", "A search named no tenant on an index that holds tenants.", "Pass tenant_id= (a run's metadata tenant_id reaches the search tool), or build the provider with require_tenant=False."),
)
# fmt: on
