"""Contract test suites: base classes a provider's own test suite subclasses.

Each suite documents the fixture the subclass provides (for example ``make_store``).
"""
