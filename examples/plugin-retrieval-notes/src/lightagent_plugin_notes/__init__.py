"""lightagent-plugin-notes: an example third-party retrieval plugin."""

__version__ = "0.1.0"
__all__ = ["__version__"]
