"""The lightagent plugin of lightagent-dag: its hook implementations."""

from __future__ import annotations
