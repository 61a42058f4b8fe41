"""Skills, AGENTS.md project instructions and the sandboxed tool generator for lightagent."""

from __future__ import annotations

__all__: list[str] = []
