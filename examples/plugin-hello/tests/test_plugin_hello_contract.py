"""lightagent-plugin-hello passes the standard tool contract and loads in an isolated host."""

import pytest
from lightagent.plugins import PluginHost
from lightagent_contracts.suites.tool_provider import ToolProviderContract
from lightagent_plugin_hello import plugin
from lightagent_plugin_hello.plugin import hello


class TestHelloToolContract(ToolProviderContract):
    @pytest.fixture
    def tools(self):
        return [hello]

    @pytest.fixture
    def tool_examples(self):
        return [("hello", {"name": "Ada"}, lambda result: result == "Hello, Ada!")]


def test_the_plugin_registers_its_tool_in_an_isolated_host():
    host = PluginHost(entry_points=False, plugins=[("lightagent-plugin-hello", plugin)])
    assert "hello" in host.registry.names("tool")
