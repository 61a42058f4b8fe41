"""lightagent-rag-fts: Full-text retrieval for lightagent on SQLite FTS5 or PostgreSQL."""

__version__ = "0.1.0"
__all__: list[str] = []
