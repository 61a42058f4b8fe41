"""The Model contract suite runs against ScriptedModel and against OpenAIModel on the
loopback OpenAI-wire server (through the real openai SDK)."""

from __future__ import annotations

import pytest
from lightagent.errors import ModelError
from lightagent.models.scripted import ScriptedModel
from lightagent_contracts.suites.model import ModelContract


class TestScriptedModelContract(ModelContract):
    @pytest.fixture
    def make_model(self):
        made = []

        def make(replies):
            model = ScriptedModel(list(replies))
            made.append(model)
            return model

        yield make
        for model in made:
            model.assert_exhausted()

    @pytest.fixture
    def make_failing_model(self):
        return lambda: ScriptedModel([ModelError("LA-500", "upstream failed")])


class TestOpenAIModelContract(ModelContract):
    @pytest.fixture
    def make_model(self, loopback_server):
        from lightagent.models.openai_compat import OpenAIModel

        def make(replies):
            loopback_server.reply(*replies)
            return OpenAIModel(
                "contract-model", base_url=loopback_server.base_url, api_key="test", max_retry=0
            )

        return make

    @pytest.fixture
    def make_failing_model(self, loopback_server):
        from lightagent.models.openai_compat import OpenAIModel

        def make():
            loopback_server.reply(loopback_server.error(500, {"error": {"message": "boom"}}))
            return OpenAIModel(
                "contract-model", base_url=loopback_server.base_url, api_key="test", max_retry=0
            )

        return make


class _AcompleteOnly:
    """A provider that writes only what the protocol requires: ``name`` and ``acomplete``."""

    name = "acomplete-only"

    def __init__(self, replies):
        self.inner = ScriptedModel(list(replies))

    async def acomplete(self, request):
        return await self.inner.acomplete(request)


class TestAcompleteOnlyProviderContract(ModelContract):
    """The kernel adapts complete, stream and astream: the same suite passes."""

    @pytest.fixture
    def make_model(self):
        return _AcompleteOnly

    @pytest.fixture
    def make_failing_model(self):
        return lambda: _AcompleteOnly([ModelError("LA-500", "upstream failed")])
