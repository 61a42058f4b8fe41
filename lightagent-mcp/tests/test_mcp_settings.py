"""Settings, credentials and errors that need no server."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent_mcp import (
    DefinitionPins,
    MCPClientManager,
    MCPConfigError,
    MCPToolset,
    Scrubber,
    load_mcp_settings,
    parse_server,
)
from lightagent_mcp.credentials import resolve_server


def test_the_seeds_forms_and_transport_rules():
    servers = load_mcp_settings(
        {
            "mcpServers": {
                "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
                "legacy": {"url": "http://127.0.0.1:9/sse", "headers": {"X-Trace": "1"}},
                "modern": {"url": "http://127.0.0.1:9/mcp", "transport": "http"},
                "off": {
                    "command": "x",
                    "disabled": True,
                    "namespace": "o",
                    "namespace_tools": True,
                },
            }
        }
    )
    assert [s.transport for s in servers.values()] == ["stdio", "sse", "streamable-http", "stdio"]
    assert servers["time"].args == ("--local-timezone", "UTC")
    assert servers["off"].disabled and servers["off"].namespace_tools
    assert servers["time"].reconnect_attempts == 1 and servers["time"].protocol == "legacy"


def test_json_text_and_file(tmp_path):
    doc = {"mcpServers": {"a": {"command": "x"}}}
    assert list(load_mcp_settings(json.dumps(doc))) == ["a"]
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(doc))
    assert list(load_mcp_settings(path)) == ["a"] == list(load_mcp_settings(str(path)))


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("/no/such/mcp.json", "cannot read"),
        ({"mcpServers": {"a": {"command": "x", "url": "http://h"}}}, "exactly one of"),
        ({"mcpServers": {"a": {"args": []}}}, "exactly one of"),
        ({"mcpServers": {"a": {"command": "x", "args": "y z"}}}, "args"),
        ({"mcpServers": {"a": {"url": "ftp://h"}}}, "http:// or https://"),
        (
            {"mcpServers": {"a": {"url": "http://h", "transport": "carrier-pigeon"}}},
            "unknown transport",
        ),
        ({"mcpServers": {"a": {"command": "x", "reconnect_attempts": -1}}}, "reconnect_attempts"),
        ({"mcpServers": {"a": {"command": "x", "timeout": 0}}}, "timeout"),
        ({"mcpServers": {"a": {"command": "x", "colour": "red"}}}, "colour"),
        ({"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}, "disabled"),
        ({"mcpServers": {"bad name!": {"command": "x"}}}, "server name"),
        ({"mcpServers": []}, "mcpServers"),
        ({"command": "x"}, "one server's settings"),
    ],
)
def test_bad_settings_are_typed_errors_naming_the_key(source, needle):
    with pytest.raises(MCPConfigError) as info:
        load_mcp_settings(source)
    assert info.value.code == "LA-MCP-CONFIG" and needle in info.value.message


@pytest.mark.parametrize(
    ("cfg", "key"),
    [
        (
            {"url": "http://h/mcp", "headers": {"Authorization": "Bearer abcdef123456ghijkl"}},
            "headers.Authorization",
        ),
        ({"url": "http://h/mcp", "headers": {"X-Api-Key": "plainvalue99"}}, "headers.X-Api-Key"),
        ({"url": "http://user:hunter2pass@h/mcp"}, "url"),
        ({"url": "http://h/mcp?api_key=abc123def456"}, "url?api_key"),
        ({"command": "x", "env": {"GITHUB_TOKEN": "ghp_" + "a" * 36}}, "env.GITHUB_TOKEN"),
        ({"command": "x", "args": ["--key", "sk-" + "b" * 40]}, "args[1]"),
    ],
)
def test_a_literal_secret_is_refused_naming_the_key(cfg, key):
    with pytest.raises(MCPConfigError) as info:
        parse_server("remote", cfg)
    message = info.value.message
    assert f"mcpServers.remote.{key}" in message and "literal credential" in message
    assert "abcdef123456" not in message and "hunter2" not in message and "ghp_" not in message


def test_references_resolve_from_the_environment_and_are_scrubbed(monkeypatch):
    import asyncio

    monkeypatch.setenv("SVC_TOKEN", "s3cr3t-value-0042")
    settings = parse_server(
        "remote",
        {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${SVC_TOKEN}"}},
    )
    scrubber = Scrubber()
    resolved = asyncio.run(resolve_server(settings, None, scrubber))
    assert resolved.headers == {"Authorization": "Bearer s3cr3t-value-0042"}
    assert scrubber.text("sent s3cr3t-value-0042 upstream") == "sent [redacted] upstream"
    assert "s3cr3t" not in json.dumps(settings.to_dict())  # the reference, never the value


def test_a_missing_variable_names_the_variable_not_a_value(monkeypatch):
    import asyncio

    monkeypatch.delenv("NOPE_TOKEN", raising=False)
    settings = parse_server(
        "r", {"url": "http://h/mcp", "headers": {"Authorization": "${NOPE_TOKEN}"}}
    )
    with pytest.raises(MCPConfigError) as info:
        asyncio.run(resolve_server(settings, None, Scrubber()))
    assert "NOPE_TOKEN" in info.value.message and info.value.details["variable"] == "NOPE_TOKEN"


def test_a_credential_provider_adds_headers_sync_or_async():
    import asyncio

    settings = parse_server("r", {"url": "http://h/mcp", "transport": "streamable-http"})

    class Vault:
        async def headers(self, server, config):
            assert server == "r" and config["url"] == "http://h/mcp"
            return {"Authorization": "Bearer vault-issued-77"}

    scrubber = Scrubber()
    resolved = asyncio.run(resolve_server(settings, Vault(), scrubber))
    assert resolved.headers["Authorization"] == "Bearer vault-issued-77"
    assert "vault-issued" not in scrubber.text("Bearer vault-issued-77")
    with pytest.raises(MCPConfigError, match="credential provider failed"):
        asyncio.run(resolve_server(settings, lambda s, c: 1 / 0, Scrubber()))
    with pytest.raises(MCPConfigError, match="mapping of headers"):
        asyncio.run(resolve_server(settings, lambda s, c: "token", Scrubber()))


def test_toolsets_from_a_document_skip_disabled_servers_and_share_pins():
    toolsets = MCPToolset.from_settings(
        {"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "disabled": True}}}
    )
    assert [t.name for t in toolsets] == ["a"] and toolsets[0].namespace == "a"
    with pytest.raises(MCPConfigError, match="from_settings"):
        MCPToolset({"mcpServers": {}})
    manager = MCPClientManager({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}})
    assert manager.toolsets["a"].pins is manager.toolsets["b"].pins


def test_pins_persist_and_a_bad_file_is_a_typed_error(tmp_path):
    path = tmp_path / "pins.json"
    pins = DefinitionPins(path)
    pins.pin("srv", "echo", "sha256:1")
    assert DefinitionPins(path).get("srv", "echo") == "sha256:1"
    path.write_text("{broken")
    with pytest.raises(MCPConfigError, match="pins"):
        DefinitionPins(path)


def test_setup_mcp_without_settings_is_a_typed_error():
    import asyncio

    agent = LightAgent(model=ScriptedModel([]))
    with pytest.raises(MCPConfigError, match="mcp_setting"):
        asyncio.run(agent.setup_mcp())


def test_setup_mcp_names_the_extra_when_the_plugin_is_missing():
    from lightagent import ConfigurationError
    from lightagent.plugins import PluginHost, reset_host

    reset_host(PluginHost(entry_points=False))  # lightagent-mcp is not installed
    try:
        agent = LightAgent(model=ScriptedModel([]))
        with pytest.raises(ConfigurationError) as info:
            agent.setup_mcp({"mcpServers": {}})
    finally:
        reset_host(None)
    assert info.value.code == "LA-MISSING-EXTRA"
    assert "pip install 'lightagent-core[mcp]'" in info.value.hint


def test_setup_mcp_is_the_mcp_extension():
    from lightagent.extensions import attribute_owner
    from lightagent_mcp.extension import MCPExtension, MCPPart

    owner = attribute_owner("setup_mcp")
    assert isinstance(owner, MCPExtension) and owner.name == "mcp"
    agent = LightAgent(model=ScriptedModel([]))
    assert isinstance(agent.extension_part("mcp"), MCPPart)
    assert "setup_mcp" not in dir(type(agent))


def test_importing_the_plugin_does_not_import_the_sdk():
    code = (
        "import sys, lightagent_mcp, lightagent_mcp.plugin\n"
        "lightagent_mcp.MCPToolset({'command': 'x'}, name='a')\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_plugin_registers_an_mcp_toolset_factory():
    from lightagent_mcp import plugin

    registered = {}
    plugin.register_toolsets(lambda name, provider, **kw: registered.setdefault(name, provider))
    assert registered == {"mcp": "lightagent_mcp.plugin:mcp_toolset"}
    toolset = plugin.mcp_toolset(name="time", command="mcp-server-time")
    assert isinstance(toolset, MCPToolset) and toolset.name == "time"
    assert plugin.lightagent_manifest()["providers"] == {"toolset": ("mcp",)}
