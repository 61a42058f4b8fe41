"""Flow stores: the contract, the in-memory default, JSON files and SQL (SQLite/PostgreSQL)."""

from __future__ import annotations

from lightagent_flow.stores.base import LightFlowStore, MemoryLightFlowStore
from lightagent_flow.stores.json_store import JsonLightFlowStore
from lightagent_flow.stores.sql_store import SqlLightFlowStore

__all__ = ["JsonLightFlowStore", "LightFlowStore", "MemoryLightFlowStore", "SqlLightFlowStore"]
