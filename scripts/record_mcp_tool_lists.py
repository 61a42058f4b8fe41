"""Record the tool lists of the public MCP reference servers into a test fixture.

The selection-recall test (lightagent-selection/tests/test_selection_recall.py) ranks
the tools real servers offer; this script fetches those lists again. It needs the servers
installed outside the project's venv, for example::

    mkdir -p /tmp/mcpref/npm && cd /tmp/mcpref/npm && npm init -y && npm install \\
        @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem \\
        @modelcontextprotocol/server-memory @modelcontextprotocol/server-sequential-thinking
    python3 -m venv /tmp/mcpref/pyvenv
    /tmp/mcpref/pyvenv/bin/pip install mcp mcp-server-time mcp-server-git mcp-server-fetch
    /tmp/mcpref/pyvenv/bin/python scripts/record_mcp_tool_lists.py /tmp/mcpref

Each server is started over stdio and asked for ``tools/list`` through the official ``mcp``
SDK; names, titles, descriptions and input schemas are written with each server's package
name and version.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from importlib import metadata
from pathlib import Path

OUT = (
    Path(__file__).resolve().parent.parent
    / "lightagent-selection/tests/data/mcp_reference_tools.json"
)
NPM = [
    ("@modelcontextprotocol/server-everything", "everything", ["stdio"]),
    ("@modelcontextprotocol/server-filesystem", "filesystem", ["{tmp}"]),
    ("@modelcontextprotocol/server-memory", "memory", []),
    ("@modelcontextprotocol/server-sequential-thinking", "sequential-thinking", []),
]
PYPI = [
    ("mcp-server-time", "time", []),
    ("mcp-server-git", "git", []),
    ("mcp-server-fetch", "fetch", []),
]


async def _tools(command: str, args: list[str]) -> list[dict]:
    import mcp

    params = mcp.StdioServerParameters(command=command, args=args)
    async with mcp.Client(params, read_timeout_seconds=60) as client:
        tools, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = getattr(page, "next_cursor", None)
            if not cursor:
                break
    out = []
    for tool in tools:
        schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
        if hasattr(schema, "model_dump"):
            schema = schema.model_dump(by_alias=True, mode="json", exclude_none=True)
        out.append(
            {
                "name": tool.name,
                "title": getattr(tool, "title", None),
                "description": tool.description or "",
                "input_schema": schema or {"type": "object", "properties": {}},
            }
        )
    return out


async def main(root: Path) -> None:
    servers = []
    tmp = tempfile.mkdtemp()
    node_modules = root / "npm" / "node_modules"
    for package, name, args in NPM:
        folder = node_modules / package
        manifest = json.loads((folder / "package.json").read_text())
        entry = (
            manifest["bin"]
            if isinstance(manifest["bin"], str)
            else next(iter(manifest["bin"].values()))
        )
        argv = [str(folder / entry), *(a.format(tmp=tmp) for a in args)]
        tools = await _tools("node", argv)
        servers.append(
            {
                "server": name,
                "package": f"npm:{package}",
                "version": manifest["version"],
                "tools": tools,
            }
        )
    for package, name, args in PYPI:
        bindir = Path(sys.executable).parent
        tools = await _tools(str(bindir / package), args)
        servers.append(
            {
                "server": name,
                "package": f"pypi:{package}",
                "version": metadata.version(package),
                "tools": tools,
            }
        )
    document = {
        "comment": "Tool lists of the public MCP reference servers, recorded over stdio with "
        "scripts/record_mcp_tool_lists.py (server, package and version per entry).",
        "servers": servers,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"{sum(len(s['tools']) for s in servers)} tools from {len(servers)} servers -> {OUT}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/mcpref")))
