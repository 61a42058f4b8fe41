"""The codes of the control plane's approval tokens.

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
    ("LA-APPROVAL-REPLAY", "policy", "The approval was already used.", "Approvals are single-use; ask for a new one."),
    ("LA-APPROVAL-EXPIRED", "policy", "The approval has expired.", "Ask for a new approval; raise ttl_seconds if reviews take longer."),
    ("LA-APPROVAL-MISMATCH", "policy", "The approval does not fit this operation.", "Approvals bind operation, arguments, tenant, project, run and resource; ask for a new one."),
    ("LA-APPROVAL-KEY", "policy", "No approval signing key is configured.", "Set LIGHTAGENT_APPROVAL_KEY or pass key= (at least 16 bytes)."),
)
# fmt: on
