"""Helpers of the lightagent-mcp tests: real MCP servers over stdio, SSE and streamable HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SERVER = str(Path(__file__).parent / "servers" / "mcp_test_server.py")
TOKEN = "tok-4f9a2c71d3e8b605"


def stdio(mode: str | None = None, **extra: Any) -> dict[str, Any]:
    """One stdio server's settings running the test server."""
    args = [SERVER] + (["--mode", mode] if mode else [])
    return {"command": sys.executable, "args": args, "init_timeout": 60, "timeout": 60, **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """The test server as a subprocess on 127.0.0.1; ``restart()`` keeps the port."""

    def __init__(self, transport: str, mode: str | None = None) -> None:
        self.transport = transport
        self.mode = mode
        self.port = free_port()
        path = "/sse" if transport == "sse" else "/mcp"
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "EXPECT_TOKEN": TOKEN}
        self.proc = subprocess.Popen(
            [sys.executable, SERVER, "--transport", self.transport, "--port", str(self.port)]
            + (["--mode", self.mode] if self.mode else []),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the {self.transport} test server exited")
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"the {self.transport} test server did not listen within 60 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    def settings(self, **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "url": self.url,
            "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"},
            "init_timeout": 30,
            "timeout": 30,
        }
        if self.transport == "http":
            out["transport"] = "streamable-http"
        out.update(extra)
        return out


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def wait_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    """The pids still running after waiting up to ``timeout`` seconds for them to end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]
