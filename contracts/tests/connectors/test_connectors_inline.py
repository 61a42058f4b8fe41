"""`validate_connector` on the seeds' inline manifest: tools, hooks and MCP settings given
as objects and dicts in ``ConnectorManifest(...)`` itself, not as a packaged plugin."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from lightagent.manifest import ConnectorManifest
from lightagent_contracts.connectors import validate_connector
from lightagent_contracts.connectors.mcp_settings import check_mcp_servers


def _module(tmp_path: Path, name: str, source: str) -> ModuleType:
    """Import ``source`` from a real file, as a user's tool module would be."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


SAFE = """
    import json

    from lightagent import tool


    @tool
    def search(query: str) -> str:
        \"\"\"Search the notes.\"\"\"
        return json.dumps({"query": query})


    @tool(name="search")
    def search_again(query: str) -> str:
        \"\"\"Search the notes a second way.\"\"\"
        return query
"""


def _errors(report) -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in report.findings if f.level == "error"]


def test_a_safe_inline_manifest_passes(tmp_path: Path) -> None:
    tools = _module(tmp_path, "inline_safe_tools", SAFE)
    report = validate_connector(
        ConnectorManifest("notes", "0.1.0", "Notes search", tools=[tools.search])
    )
    assert report.passed, report.format_text()


def test_two_inline_tools_with_one_name_are_refused(tmp_path: Path) -> None:
    tools = _module(tmp_path, "inline_dup_tools", SAFE)
    manifest = ConnectorManifest(
        "notes", "0.1.0", "Notes search", tools=[tools.search, tools.search_again]
    )
    report = validate_connector(manifest)
    assert not report.passed
    dup = [f for f in report.findings if f.code == "LAV051"]
    assert len(dup) == 1 and "'search'" in dup[0].message and dup[0].hint
    # Names given as strings are held to the same rule.
    named = validate_connector(ConnectorManifest("n", "0.1.0", "d", tools=["a", "b", "a"]))
    assert [f.code for f in named.errors] == ["LAV051"]


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("headers", "Authorization", "Bearer abcdefghijklmnop"),
        ("headers", "Authorization", "Bearer abc123"),
        ("headers", "X-Upstream", "Bearer 0f9e8d7c6b5a4f3e2d1c"),
        ("headers", "X-Api-Key", "sk-live-abc"),
        ("headers", "Cookie", "session=4f9c2d8e1b7a6c5d"),
        ("env", "GITHUB_TOKEN", "ghp_abc123"),
        ("env", "GH", "ghp_0123456789abcdefghijklmnopqrstuvwxyz"),
        ("env", "DB_PASSWORD", "hunter2"),
        ("env", "OPENAI_API_KEY", "sk-abcdef"),
    ],
)
def test_a_literal_secret_in_mcp_headers_or_env_is_refused(
    where: str, key: str, value: str
) -> None:
    server = (
        {"url": "https://mcp.example/mcp", where: {key: value}}
        if where == "headers"
        else {"command": "mcp-server", "args": [], where: {key: value}}
    )
    report = validate_connector(
        ConnectorManifest("svc", "0.1.0", "A service", mcp_servers={"svc": server})
    )
    found = [f for f in report.findings if f.code == "LAV070"]
    assert found and all(f.level == "error" for f in found), report.format_text()
    assert "${" in found[0].hint  # an environment reference is the way out
    assert value not in found[0].message  # the report never repeats the secret


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("headers", "Authorization", "Bearer ${SVC_TOKEN}"),
        ("headers", "Authorization", "${SVC_AUTHORIZATION}"),
        ("headers", "Accept", "application/json"),
        ("headers", "X-Client", "lightagent"),
        ("env", "GITHUB_TOKEN", "${GITHUB_TOKEN}"),
        ("env", "DB_PASSWORD", "${DB_PASSWORD}"),
        ("env", "LOG_LEVEL", "debug"),
        ("env", "PASSWORD_FILE", "/run/secrets/db"),
    ],
)
def test_references_and_plain_settings_are_not_secrets(where: str, key: str, value: str) -> None:
    server = (
        {"url": "https://mcp.example/mcp", where: {key: value}}
        if where == "headers"
        else {"command": "mcp-server", "args": [], where: {key: value}}
    )
    assert check_mcp_servers({"svc": server}, "x") == []


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("import subprocess\n", "subprocess"),
        ("from subprocess import run as go\n", "subprocess"),
        ("import os\n\ndef _shell(c):\n    return os.system(c)\n", "os.system"),
        ("import pickle\n", "pickle"),
        ("import ctypes\n", "ctypes"),
        ("def _run(code):\n    return eval(code)\n", "eval"),
    ],
)
def test_an_inline_tool_whose_module_does_something_unsafe_is_refused(
    tmp_path: Path, source: str, flagged: str
) -> None:
    name = f"inline_unsafe_{abs(hash(source))}"
    tools = _module(
        tmp_path,
        name,
        source
        + textwrap.dedent(
            """

            from lightagent import tool


            @tool
            def lookup(query: str) -> str:
                \"\"\"Look something up.\"\"\"
                return query
            """
        ),
    )
    report = validate_connector(
        ConnectorManifest("svc", "0.1.0", "A service", tools=[tools.lookup]), base_path=tmp_path
    )
    unsafe = [f for f in report.findings if f.code == "LAV053"]
    assert unsafe and not report.passed, report.format_text()
    assert all(f.level == "error" and f.hint for f in unsafe)
    assert "'lookup'" in unsafe[0].message and flagged in unsafe[0].message
    assert unsafe[0].location.startswith(f"{name}.py:")
    data = json.loads(report.to_json())
    assert {"code": "LAV053", "hint": unsafe[0].hint} in [
        {"code": f["code"], "hint": f["hint"]} for f in data["findings"]
    ]


def test_an_inline_tool_without_readable_source_is_refused() -> None:
    from lightagent import tool

    namespace: dict = {"tool": tool}
    exec(  # a tool defined where no file holds its code
        compile(
            "@tool\ndef opaque(q: str) -> str:\n    'Opaque.'\n    return q\n", "<made>", "exec"
        ),
        namespace,
    )
    report = validate_connector(ConnectorManifest("o", "0.1.0", "d", tools=[namespace["opaque"]]))
    assert [f.code for f in report.errors] == ["LAV054"], report.format_text()
    assert report.errors[0].hint
