"""The lightagent plugin of lightagent-rag-fts: its hook implementations."""

from __future__ import annotations
