"""The lightagent plugin of lightagent-guardrails: its hook implementations."""

from __future__ import annotations
