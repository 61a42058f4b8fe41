"""Benchmark of lightagent-mcp against the raw ``mcp`` client doing the same calls.

Run: ``.venv/bin/python bench/bench_mcp.py`` (about a minute). Writes bench/results/mcp.md.

Both sides talk to the same test server (the SDK's ``MCPServer``) over stdio and over
streamable HTTP on 127.0.0.1:
- first call: start (stdio: spawn the process; HTTP: connect), initialize, list the tools,
  call ``add`` once; the floor is ``mcp.Client`` doing exactly that;
- per call: ``add`` on an open session, repeated; ours goes through the kernel's
  ``ToolsetOwner`` (the caller's loop hands the call to the owner task) and the toolset's
  result conversion; the floor awaits ``client.call_tool`` on the session's own loop.

Where ``node`` and the npm reference server ``server-everything`` are installed (the
tests install it into ``LIGHTAGENT_MCP_NPM_DIR``, default ``~/.cache/lightagent-mcp/npm``)
a third row measures its ``echo`` over stdio the same way.
"""

from __future__ import annotations

import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import mcp
from lightagent.toolsets import ToolsetOwner
from lightagent_mcp import MCPToolset

HERE = Path(__file__).resolve().parent
SERVER = HERE.parent / "lightagent-mcp" / "tests" / "servers" / "mcp_test_server.py"
RESULTS = HERE / "results" / "mcp.md"
FIRST_ROUNDS = 5
CALLS = 300


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _http_server() -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the HTTP test server did not start")


#: The tool each row calls, and its arguments (``{i}`` marks the changing value).
TOOLS = {"stdio": ("add", "a"), "http": ("add", "a"), "everything": ("echo", "message")}


def _argv(transport: str) -> list[str]:
    if transport == "everything":
        return [str(_everything_node()), str(_everything())]
    return [sys.executable, str(SERVER)]


def _everything() -> Path:
    default = Path.home() / ".cache" / "lightagent-mcp" / "npm"
    base = Path(os.environ.get("LIGHTAGENT_MCP_NPM_DIR") or default)
    return (
        base / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    )


def _everything_node() -> str:
    import shutil

    return shutil.which("node") or "node"


def _args(transport: str, i: int) -> dict[str, object]:
    tool, key = TOOLS[transport]
    return {key: str(i)} if tool == "echo" else {"a": i, "b": 2}


def _raw_client(transport: str, url: str | None) -> mcp.Client:
    if transport != "http":
        from mcp.client.stdio import stdio_client

        command, *args = _argv(transport)
        if transport == "everything":
            args.append("stdio")
        params = mcp.StdioServerParameters(command=command, args=args)
        return mcp.Client(
            stdio_client(params, errlog=open(os.devnull, "w")), mode="legacy", cache=None
        )
    assert url is not None
    return mcp.Client(url, mode="legacy", cache=None)


def _ours(transport: str, url: str | None) -> MCPToolset:
    if transport != "http":
        command, *args = _argv(transport)
        if transport == "everything":
            args.append("stdio")
        return MCPToolset({"command": command, "args": args}, name="bench")
    return MCPToolset({"url": url, "transport": "streamable-http"}, name="bench")


async def _raw_first(transport: str, url: str | None) -> float:
    started = time.perf_counter()
    async with _raw_client(transport, url) as client:
        await client.list_tools()
        await client.call_tool(TOOLS[transport][0], _args(transport, 1))
        elapsed = time.perf_counter() - started
    return elapsed


async def _our_first(transport: str, url: str | None) -> float:
    owner = ToolsetOwner(_ours(transport, url))
    started = time.perf_counter()
    await owner.alist()
    await owner.acall(TOOLS[transport][0], _args(transport, 1), None)
    elapsed = time.perf_counter() - started
    await owner.aclose()
    return elapsed


async def _raw_calls(transport: str, url: str | None) -> float:
    async with _raw_client(transport, url) as client:
        tool = TOOLS[transport][0]
        for _ in range(20):
            await client.call_tool(tool, _args(transport, 1))
        started = time.perf_counter()
        for i in range(CALLS):
            await client.call_tool(tool, _args(transport, i))
        return (time.perf_counter() - started) / CALLS


async def _our_calls(transport: str, url: str | None) -> float:
    owner = ToolsetOwner(_ours(transport, url))
    await owner.alist()
    tool = TOOLS[transport][0]
    for _ in range(20):
        await owner.acall(tool, _args(transport, 1), None)
    started = time.perf_counter()
    for i in range(CALLS):
        await owner.acall(tool, _args(transport, i), None)
    elapsed = (time.perf_counter() - started) / CALLS
    await owner.aclose()
    return elapsed


def _direct_calls(transport: str, url: str | None) -> float:
    """Ours without the kernel's cross-loop hand-off: awaited in the owner loop itself."""
    from lightagent.bridge import run_sync

    async def body() -> float:
        toolset = _ours(transport, url)
        async with toolset:
            await toolset.list_tools()
            tool = TOOLS[transport][0]
            for _ in range(20):
                await toolset.call_tool(tool, _args(transport, 1), None)
            started = time.perf_counter()
            for i in range(CALLS):
                await toolset.call_tool(tool, _args(transport, i), None)
            return (time.perf_counter() - started) / CALLS

    return run_sync(body())


def _median(fn: object, transport: str, url: str | None, rounds: int) -> float:
    return statistics.median(asyncio.run(fn(transport, url)) for _ in range(rounds))  # type: ignore[operator]


def main() -> int:
    proc, url = _http_server()
    rows = []
    try:
        transports = ["stdio", "http"]
        if _everything().exists():
            transports.append("everything")
        for transport in transports:
            target = url if transport == "http" else None
            raw_first = _median(_raw_first, transport, target, FIRST_ROUNDS)
            our_first = _median(_our_first, transport, target, FIRST_ROUNDS)
            raw_call = _median(_raw_calls, transport, target, 3)
            our_call = _median(_our_calls, transport, target, 3)
            direct = statistics.median(_direct_calls(transport, target) for _ in range(3))
            rows.append((transport, raw_first, our_first, raw_call, our_call, direct))
    finally:
        proc.terminate()
        proc.wait(10)
    lines = [
        "# MCP (lightagent-mcp)\n",
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"mcp {mcp.__dict__.get('__version__', '') or _sdk_version()}. The floor is the raw "
        "`mcp.Client` doing the same calls against the same server (the SDK's `MCPServer`). "
        f"First call: start, initialize, list tools, one call (median of {FIRST_ROUNDS}). "
        f"Per call: `add` on an open session (median of 3 runs of {CALLS} calls). "
        '"per call, ours" is what an agent pays: the call is handed from the caller\'s loop '
        "to the toolset's owner task on lightagent's background loop and back; \"in the owner "
        "loop\" awaits the toolset there directly (lightagent-mcp's own cost). "
        "The `everything` row is the npm reference server `server-everything` over stdio "
        "(`echo`), when node and the package are installed. "
        "Ratio = ours / raw; lower is better.\n",
        "| transport | first call, raw | first call, ours | ratio | per call, raw | per call, ours | ratio | in the owner loop | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for transport, raw_first, our_first, raw_call, our_call, direct in rows:
        lines.append(
            f"| {transport} | {raw_first * 1000:.0f} ms | {our_first * 1000:.0f} ms | "
            f"{our_first / raw_first:.2f}x | {raw_call * 1e6:.0f} µs | {our_call * 1e6:.0f} µs | "
            f"{our_call / raw_call:.2f}x | {direct * 1e6:.0f} µs | {direct / raw_call:.2f}x |"
        )
    text = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    return 0


def _sdk_version() -> str:
    from importlib import metadata

    return metadata.version("mcp")


if __name__ == "__main__":
    sys.exit(main())
