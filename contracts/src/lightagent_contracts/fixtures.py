"""Fixtures: the loopback OpenAI-wire server and the scripted model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lightagent.models.scripted import ScriptedModel

from lightagent_contracts.loopback import LoopbackServer

__all__ = ["loopback_server", "scripted_model"]


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """A :class:`ScriptedModel` that fails the test if scripted replies are left unused."""
    model = ScriptedModel()
    yield model
    model.assert_exhausted()


@pytest.fixture
def loopback_server() -> Iterator[LoopbackServer]:
    """A running :class:`LoopbackServer`; fails the test if scripted replies are left unused."""
    with LoopbackServer() as server:
        yield server
        server.assert_exhausted()
