"""The lightagent plugin of lightagent-swarm."""

from __future__ import annotations
