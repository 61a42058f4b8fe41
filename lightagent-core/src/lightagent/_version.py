"""The version of lightagent-core."""

__version__ = "0.1.0"
