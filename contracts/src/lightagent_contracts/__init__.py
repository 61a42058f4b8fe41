"""lightagent-contracts: contract test suites and fixtures for lightagent plugin authors."""

__version__ = "0.1.0"
