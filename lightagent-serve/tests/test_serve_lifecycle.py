"""Disconnects cancel runs; SIGTERM drains a real `lightagent serve` process; the CLI refuses bad setups."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx
import openai
import pytest
from lightagent import LightAgent, RunContext, tool
from lightagent.cli import main

KEY = "serve-test-key-0123456789"


class RunEnds:
    """A run observer that keeps each run's ``run_end`` data."""

    def __init__(self) -> None:
        self.ends: list[dict] = []
        self.done = threading.Event()

    def on_event(self, run, event) -> None:
        if event["type"] == "run_end":
            self.ends.append(event["data"])
            self.done.set()


def slow_agent(server, ends: RunEnds, gate: threading.Event) -> LightAgent:
    @tool
    def lookup(item: str, run: RunContext) -> str:
        """Look something up (slowly: until the run is cancelled or the gate opens)."""
        deadline = time.monotonic() + 20
        while not run.cancellation.cancelled and not gate.is_set():
            assert time.monotonic() < deadline, "the run was never cancelled"
            time.sleep(0.01)
        return f"{item}: found"

    return LightAgent(
        name="support",
        model="gpt-4.1",
        api_key="upstream",
        base_url=server.base_url,
        tools=[lookup],
        observers=[ends],
    )


def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


@pytest.mark.parametrize("stream", [True, False])
def test_a_client_that_disconnects_cancels_its_run(loopback_server, serve, stream) -> None:
    ends, gate = RunEnds(), threading.Event()
    loopback_server.reply({"tool_calls": [{"name": "lookup", "arguments": {"item": "x"}}]})
    served = serve(slow_agent(loopback_server, ends, gate))
    body = json.dumps(
        {"model": "support", "messages": [{"role": "user", "content": "x?"}], "stream": stream}
    ).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"Authorization: Bearer {KEY}\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(request)
        _wait_for(lambda: len(loopback_server.requests) == 1, timeout=60)  # in its tool now
        if stream:
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")  # the stream had begun
    # hung up while the tool runs: the server notices and cancels the run, which stops
    # before its next model call
    assert ends.done.wait(30)
    gate.set()
    assert ends.ends[0]["success"] is False
    assert ends.ends[0]["error"]["code"] == "LA-CANCELLED"
    assert len(loopback_server.requests) == 1  # no model call after the client left


APP = """
import os, time
from lightagent import LightAgent, RunContext, tool

@tool
def slow_lookup(item: str) -> str:
    '''Look something up.'''
    # Says it is in the tool, then runs until the test lets it end (bounded).
    folder = os.environ["TOOL_FILES"]
    open(os.path.join(folder, "in-tool"), "w").close()
    deadline = time.monotonic() + 120
    while not os.path.exists(os.path.join(folder, "release")) and time.monotonic() < deadline:
        time.sleep(0.02)
    return item + ": found"

support = LightAgent(name="support", model="gpt-4.1", api_key="upstream",
                     base_url=os.environ["UPSTREAM_URL"], tools=[slow_lookup])
"""


def _start(
    tmp_path: Path, upstream: str, *args: str, key: str | None = KEY, **env_vars: str
) -> subprocess.Popen:
    (tmp_path / "served_app.py").write_text(textwrap.dedent(APP))
    env = {**os.environ, "UPSTREAM_URL": upstream, "TOOL_FILES": str(tmp_path), **env_vars}
    env.pop("LIGHTAGENT_SERVE_API_KEY", None)
    if key is not None:
        env["LIGHTAGENT_SERVE_API_KEY"] = key
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lightagent.cli",
            "serve",
            "served_app:support",
            "--port",
            "0",
            "--app-dir",
            str(tmp_path),
            "--log-level",
            "warning",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_sigterm_lets_in_flight_requests_finish_then_exits(loopback_server, tmp_path) -> None:
    loopback_server.reply(
        {"tool_calls": [{"name": "slow_lookup", "arguments": {"item": "order 7"}}]},
        "Order 7 was found.",
    )
    proc = _start(tmp_path, loopback_server.base_url)
    try:
        line = proc.stdout.readline()
        assert "serving support" in line, line + proc.stderr.read()
        base_url = line.split()[2]
        client = openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0, timeout=120)
        answers: list[str] = []
        worker = threading.Thread(
            target=lambda: answers.append(
                client.chat.completions.create(
                    model="support", messages=[{"role": "user", "content": "order 7?"}]
                )
                .choices[0]
                .message.content
            )
        )
        worker.start()
        # the run is in its slow tool (a first request also imports the openai SDK: slow
        # on a busy machine); the tool runs until the test releases it
        _wait_for(lambda: (tmp_path / "in-tool").exists(), timeout=90)
        assert len(loopback_server.requests) == 1
        proc.send_signal(signal.SIGTERM)
        refused = False
        deadline = time.monotonic() + 60
        while not refused and time.monotonic() < deadline:
            try:
                httpx.get(f"{base_url}/models", headers={"Authorization": f"Bearer {KEY}"})
                time.sleep(0.05)
            except httpx.ConnectError:
                refused = True  # no new connections while draining
        assert refused
        assert worker.is_alive()  # ... while the in-flight request still runs
        (tmp_path / "release").touch()
        worker.join(120)
        assert answers == ["Order 7 was found."]
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_refuses_to_start_without_a_key(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("LIGHTAGENT_SERVE_API_KEY", raising=False)
    (tmp_path / "served_app.py").write_text(textwrap.dedent(APP))
    args = ["serve", "served_app:support", "--app-dir", str(tmp_path), "--port", "0"]
    assert main(args) == 2
    assert "an API key is required" in capsys.readouterr().err
    assert main([*args, "--no-auth", "--host", "0.0.0.0"]) == 2
    assert "loopback host only" in capsys.readouterr().err
    assert main([*args, "--no-auth", "--api-key", "k"]) == 2


def test_serve_takes_a_blank_key_for_no_key(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LIGHTAGENT_SERVE_API_KEY", "  ")
    (tmp_path / "served_app.py").write_text(textwrap.dedent(APP))
    args = ["serve", "served_app:support", "--app-dir", str(tmp_path), "--port", "0"]
    assert main(args) == 2
    assert "an API key is required" in capsys.readouterr().err
    monkeypatch.delenv("LIGHTAGENT_SERVE_API_KEY")
    assert main([*args, "--api-key", " \t "]) == 2
    assert "an API key is required" in capsys.readouterr().err


def test_serve_refuses_a_bad_body_limit(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("UPSTREAM_URL", "http://127.0.0.1:9/v1")
    (tmp_path / "served_app.py").write_text(textwrap.dedent(APP))
    args = ["serve", "served_app:support", "--app-dir", str(tmp_path), "--api-key", KEY]
    assert main([*args, "--max-body-bytes", "0"]) == 2
    assert "LA-CONFIG" in capsys.readouterr().err
    monkeypatch.setenv("LIGHTAGENT_SERVE_MAX_BODY_BYTES", "lots")
    assert main(args) == 2
    assert "LIGHTAGENT_SERVE_MAX_BODY_BYTES must be a number" in capsys.readouterr().err


def test_the_body_limit_comes_from_the_environment(loopback_server, tmp_path) -> None:
    proc = _start(tmp_path, loopback_server.base_url, LIGHTAGENT_SERVE_MAX_BODY_BYTES="2000")
    try:
        line = proc.stdout.readline()
        assert "serving support" in line, line + proc.stderr.read()
        body = {"model": "support", "messages": [{"role": "user", "content": "x" * 3000}]}
        response = httpx.post(
            f"{line.split()[2]}/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {KEY}"},
        )
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "LA-REQUEST-TOO-LARGE"
        assert loopback_server.requests == []
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0


BROKEN_APP = """
class Broken:
    name = "support"

    async def arun(self, query, **options):
        raise RuntimeError("kaput (Authorization: Bearer sk-live0123456789abcdefXYZ)")

    async def astream(self, query, **options):
        raise RuntimeError("kaput (Authorization: Bearer sk-live0123456789abcdefXYZ)")
        yield

support = Broken()
"""


def test_the_server_s_log_lines_are_redacted(tmp_path) -> None:
    (tmp_path / "broken_app.py").write_text(textwrap.dedent(BROKEN_APP))
    env = {**os.environ, "LIGHTAGENT_SERVE_API_KEY": KEY}
    command = [sys.executable, "-m", "lightagent.cli", "serve", "broken_app:support"]
    proc = subprocess.Popen(
        [*command, "--port", "0", "--app-dir", str(tmp_path), "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline()
        assert "serving support" in line, line + proc.stderr.read()
        for stream in (False, True):
            response = httpx.post(
                f"{line.split()[2]}/chat/completions",
                json={
                    "model": "support",
                    "messages": [{"role": "user", "content": "hi"}],
                    "stream": stream,
                },
                headers={"Authorization": f"Bearer {KEY}"},
            )
            assert response.status_code == 500
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    err = proc.stderr.read()
    assert "Bearer [redacted]" in err and "Traceback" in err
    assert "sk-live0123456789abcdefXYZ" not in err


def test_serve_reports_an_app_it_cannot_load(tmp_path, capsys) -> None:
    code = main(["serve", "no_such_module:agent", "--api-key", KEY, "--app-dir", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "LA-CONFIG" in err and "no_such_module" in err


def test_no_auth_serves_on_loopback(loopback_server, tmp_path) -> None:
    loopback_server.reply("hello")
    proc = _start(tmp_path, loopback_server.base_url, "--no-auth", key=None)
    try:
        line = proc.stdout.readline()
        assert "(no auth)" in line, line + proc.stderr.read()
        client = openai.OpenAI(base_url=line.split()[2], api_key="anything", max_retries=0)
        reply = client.chat.completions.create(
            model="support", messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message.content == "hello"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
