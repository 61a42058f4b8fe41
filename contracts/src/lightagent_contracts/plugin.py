"""lightagent-contracts as a lightagent plugin: it registers nothing at runtime."""
