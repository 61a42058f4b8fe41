"""The lightagent plugin of lightagent-review."""

from __future__ import annotations
