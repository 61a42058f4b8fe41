"""The lightagent plugin of lightagent-memory."""

from __future__ import annotations
