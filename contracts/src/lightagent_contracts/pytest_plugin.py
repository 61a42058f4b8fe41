"""The pytest plugin of lightagent-contracts: fixtures for plugin test suites."""
