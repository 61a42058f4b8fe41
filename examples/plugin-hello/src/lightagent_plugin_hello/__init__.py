"""lightagent-plugin-hello: an example third-party lightagent plugin."""

__version__ = "0.1.0"
__all__ = ["__version__"]
