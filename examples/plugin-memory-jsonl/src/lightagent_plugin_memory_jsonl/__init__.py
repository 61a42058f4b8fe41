"""lightagent-plugin-memory-jsonl: an example third-party memory plugin."""

__version__ = "0.1.0"
__all__ = ["__version__"]
