"""lightagent-plugin-units passes the toolset contract and serves an agent by name."""

import pytest
from lightagent import LightAgent, LightAgentError
from lightagent.plugins import PluginHost, reset_host
from lightagent_contracts.suites.toolset import ToolsetContract
from lightagent_plugin_units import plugin
from lightagent_plugin_units.plugin import UnitsToolset


class TestUnitsToolsetContract(ToolsetContract):
    @pytest.fixture
    def make_toolset(self):
        return UnitsToolset

    @pytest.fixture
    def toolset_examples(self):
        return [
            (
                "convert_length",
                {"value": 10, "from_unit": "km", "to_unit": "mi"},
                lambda out: out == "6.214 mi",
            ),
            (
                "convert_temperature",
                {"value": 100, "from_unit": "C", "to_unit": "F"},
                lambda out: out == "212.0 F",
            ),
        ]


@pytest.fixture
def host():
    reset_host(PluginHost(entry_points=False, plugins=[("lightagent-plugin-units", plugin)]))
    yield
    reset_host(None)


def test_an_agent_uses_it_by_name_through_the_loopback_server(host, loopback_server):
    loopback_server.reply(
        {
            "tool_calls": [
                {
                    "name": "convert_length",
                    "arguments": {"value": 5, "from_unit": "mi", "to_unit": "km"},
                }
            ]
        },
        "5 miles are 8.05 km.",
    )
    agent = LightAgent(
        model="loopback-model",
        api_key="test",
        base_url=loopback_server.base_url,
        tools=[("units", {"precision": 2})],
    )
    assert agent.run("How many km are 5 miles?") == "5 miles are 8.05 km."
    tool_message = loopback_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == "8.05 km"
    offered = [t["function"]["name"] for t in loopback_server.requests[0]["tools"]]
    assert offered == ["convert_length", "convert_temperature"]


def test_bad_configuration_is_a_typed_error(host):
    with pytest.raises(LightAgentError) as info:
        LightAgent(model="m", api_key="k", tools=[("units", {"decimals": 2})])
    assert info.value.code == "LA-CONFIG" and "'decimals'" in info.value.message
