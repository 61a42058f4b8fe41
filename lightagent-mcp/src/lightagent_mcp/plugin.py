"""The lightagent plugin of lightagent-mcp: its hook implementations."""

from __future__ import annotations
