"""The agent loop's machinery: the state machine, its effects, and the sync and async drivers."""

from __future__ import annotations

__all__: list[str] = []
