"""A socket guard for tests: connections to anything but loopback are refused and recorded.

Use the ``no_network`` fixture, the :func:`block_network` context manager, set
``lightagent_block_network = true`` in your pytest ini options to guard every test, or let
the contract suites apply it for you (they do, automatically). Loopback (127.0.0.0/8, ::1,
``localhost``) and Unix sockets stay allowed so the loopback OpenAI-wire server and local
databases work.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

__all__ = [
    "NetworkAttempt",
    "NetworkBlockedError",
    "NetworkGuard",
    "block_network",
    "lightagent_network_policy",
    "no_network",
    "pytest_addoption",
]

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


class NetworkBlockedError(ConnectionRefusedError):
    """A test tried to reach a non-loopback address."""


@dataclass(frozen=True)
class NetworkAttempt:
    """One refused attempt: the operation and the address."""

    operation: str
    address: Any


@dataclass
class NetworkGuard:
    """What :func:`block_network` yields: the refused attempts, in order."""

    attempts: list[NetworkAttempt] = field(default_factory=list)


def _is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _is_ip(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return False
    return True


def _allowed(family: int, address: Any) -> bool:
    if family == getattr(socket, "AF_UNIX", None):
        return True
    if isinstance(address, tuple) and address:
        return _is_loopback(address[0])
    return False


_lock = threading.Lock()
_depth = 0
_saved: dict[str, Any] = {}
_guards: list[NetworkGuard] = []


def _refuse(operation: str, address: Any) -> None:
    for guard in _guards:
        guard.attempts.append(NetworkAttempt(operation, address))
    raise NetworkBlockedError(
        f"network access to {address!r} is blocked in this test (loopback only); "
        "use the loopback_server fixture"
    )


def _install() -> None:
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo
    _saved.update(connect=real_connect, connect_ex=real_connect_ex, getaddrinfo=real_getaddrinfo)

    def connect(self: socket.socket, address: Any) -> None:
        if not _allowed(self.family, address):
            _refuse("connect", address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not _allowed(self.family, address):
            _refuse("connect", address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        # A numeric address needs no lookup; connect() decides about it.
        if host is not None and not _is_loopback(host) and not _is_ip(host):
            _refuse("getaddrinfo", host)
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = getaddrinfo


def _uninstall() -> None:
    socket.socket.connect = _saved["connect"]  # type: ignore[method-assign]
    socket.socket.connect_ex = _saved["connect_ex"]  # type: ignore[method-assign]
    socket.getaddrinfo = _saved["getaddrinfo"]


@contextmanager
def block_network() -> Iterator[NetworkGuard]:
    """Refuse (and record) every connection and name lookup that is not loopback.

    Nested and concurrent uses share one patch of :mod:`socket`; it is removed when the
    last one exits.
    """
    global _depth
    guard = NetworkGuard()
    with _lock:
        if _depth == 0:
            _install()
        _depth += 1
        _guards.append(guard)
    try:
        yield guard
    finally:
        with _lock:
            _guards.remove(guard)
            _depth -= 1
            if _depth == 0:
                _uninstall()


@pytest.fixture
def no_network() -> Iterator[NetworkGuard]:
    """Block non-loopback network access for one test; yields the recorded attempts."""
    with block_network() as guard:
        yield guard


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``lightagent_block_network`` ini option (guard every test of a suite)."""
    parser.addini(
        "lightagent_block_network",
        "refuse non-loopback network access in every test (lightagent-contracts)",
        type="bool",
        default=False,
    )


@pytest.fixture(autouse=True)
def lightagent_network_policy(request: pytest.FixtureRequest) -> Iterator[None]:
    """Applies :func:`block_network` to every test when ``lightagent_block_network`` is on."""
    try:
        enabled = bool(request.config.getini("lightagent_block_network"))
    except ValueError:  # the ini option is not registered in this session
        enabled = False
    if enabled:
        with block_network():
            yield
    else:
        yield
