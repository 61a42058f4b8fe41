"""LightSwarm for lightagent: agents that hand a run on to each other through checked transfer tools."""

from __future__ import annotations

__all__: list[str] = []
