"""The lightagent plugin of lightagent-memory-mem0: its hook implementations."""

from __future__ import annotations
