"""A real uvicorn server on 127.0.0.1 (random port) serving agents, for the serve tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn
from lightagent_serve import create_app

KEY = "serve-test-key-0123456789"


class Served:
    """``create_app(agents)`` on uvicorn in a thread; ``base_url`` is the OpenAI base URL."""

    def __init__(self, agents: Any, *, api_key: str | None = KEY, **options: Any) -> None:
        self.app = create_app(agents, api_key=api_key, drain_timeout=5, **options)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(256)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, name="uvicorn", daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        self.sock = sock

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def client(self, **kwargs: Any) -> Any:
        import openai

        kwargs.setdefault("api_key", KEY)
        kwargs.setdefault("max_retries", 0)
        return openai.OpenAI(base_url=self.base_url, **kwargs)

    def async_client(self, **kwargs: Any) -> Any:
        import openai

        kwargs.setdefault("api_key", KEY)
        kwargs.setdefault("max_retries", 0)
        return openai.AsyncOpenAI(base_url=self.base_url, **kwargs)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.sock.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Served]]:
    """Start servers for a test; each is stopped at its end."""
    started: list[Served] = []

    def start(agents: Any, **kwargs: Any) -> Served:
        served = Served(agents, **kwargs)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()
