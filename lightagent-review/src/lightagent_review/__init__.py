"""Human review for lightagent: approval requests and decisions, review stores and the policy engine."""

from __future__ import annotations

__all__: list[str] = []
