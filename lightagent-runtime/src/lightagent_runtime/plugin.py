"""The lightagent plugin of lightagent-runtime."""

from __future__ import annotations
