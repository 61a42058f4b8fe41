"""The lightagent plugin of lightagent-flow: its hook implementations."""

from __future__ import annotations
