"""Real resources for toolset tests: a line server over TCP, and toolsets that hold them."""

from __future__ import annotations

import asyncio
import socketserver
import sys
import threading
from collections.abc import Iterator

import pytest
from lightagent.toolsets import BaseToolset, ToolDefinition


class _LineHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        server = self.server
        with server.lock:
            server.opened += 1
            server.changed.notify_all()
        try:
            for line in self.rfile:
                self.wfile.write(line.upper())
                self.wfile.flush()
        finally:
            with server.lock:
                server.closed += 1
                server.changed.notify_all()


class LineServer(socketserver.ThreadingTCPServer):
    """A TCP server on 127.0.0.1 that answers each line upper-cased, counting connections."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _LineHandler)
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.opened = 0
        self.closed = 0

    @property
    def port(self) -> int:
        return self.server_address[1]

    def wait_opened(self, count: int, timeout: float = 30.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.opened >= count, timeout)

    def wait_closed(self, count: int, timeout: float = 30.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.closed >= count, timeout)


@pytest.fixture
def line_server() -> Iterator[LineServer]:
    server = LineServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


SHOUT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "what to shout"}},
    "required": ["text"],
}


class TcpShoutToolset(BaseToolset):
    """Holds one TCP connection (asyncio streams: bound to the loop that opened them)."""

    namespace = "tcp"

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.entered = self.exited = 0
        self.lock: asyncio.Lock | None = None

    async def __aenter__(self) -> TcpShoutToolset:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.loop = asyncio.get_running_loop()
        self.lock = asyncio.Lock()
        self.entered += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert asyncio.get_running_loop() is self.loop, "exited on another loop"
        writer, self.writer = self.writer, None
        # Counted before the socket closes: tests read the server seeing the close as "exited".
        self.exited += 1
        if writer is not None:
            writer.close()
            await writer.wait_closed()

    def list_tools(self) -> list[ToolDefinition]:
        return [ToolDefinition("shout", "Shout a text back (over TCP).", SHOUT_SCHEMA)]

    async def call_tool(self, name: str, arguments: dict, context) -> str:
        assert asyncio.get_running_loop() is self.loop, "called on another loop"
        assert self.writer is not None and self.reader is not None and self.lock is not None
        async with self.lock:
            self.writer.write(arguments["text"].encode() + b"\n")
            await self.writer.drain()
            line = await self.reader.readline()
        return line.decode().strip()


WORKER = r"""
import sys
for line in sys.stdin:
    sys.stdout.write(str(len(line.split())) + "\n")
    sys.stdout.flush()
"""


class SubprocessCountToolset(BaseToolset):
    """Holds one worker process (asyncio subprocess pipes: bound to the opening loop)."""

    namespace = "proc"

    def __init__(self) -> None:
        super().__init__()
        self.proc: asyncio.subprocess.Process | None = None
        self.lock: asyncio.Lock | None = None
        self.returncode: int | None = None

    async def __aenter__(self) -> SubprocessCountToolset:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            WORKER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        self.lock = asyncio.Lock()
        return self

    async def __aexit__(self, *exc: object) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            assert proc.stdin is not None
            proc.stdin.close()
            self.returncode = await proc.wait()

    def list_tools(self) -> list[ToolDefinition]:
        return [
            ToolDefinition(
                "count_words",
                "Count the words of a text (in a worker process).",
                {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
            )
        ]

    async def call_tool(self, name: str, arguments: dict, context) -> str:
        assert self.proc is not None and self.proc.stdin and self.proc.stdout and self.lock
        async with self.lock:
            self.proc.stdin.write(arguments["text"].replace("\n", " ").encode() + b"\n")
            await self.proc.stdin.drain()
            return (await self.proc.stdout.readline()).decode().strip()
