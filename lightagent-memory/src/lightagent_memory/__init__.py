"""Memory policy for lightagent: scopes, candidates and promotion, SharedMemoryPool on SQLite and PostgreSQL, self-learning."""

from __future__ import annotations

__all__: list[str] = []
