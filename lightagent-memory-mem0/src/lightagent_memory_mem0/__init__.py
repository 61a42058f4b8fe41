"""lightagent-memory-mem0: mem0 long-term memory for lightagent agents."""

__version__ = "0.1.0"
__all__: list[str] = []
