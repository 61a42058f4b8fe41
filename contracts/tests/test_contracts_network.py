"""The socket guard: loopback passes, anything else is refused and recorded."""

from __future__ import annotations

import socket
import urllib.request

import pytest
from lightagent_contracts.network import NetworkBlockedError, block_network, no_network  # noqa: F401


def _listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    return server


def test_loopback_is_allowed(no_network):  # noqa: F811 - the imported fixture
    server = _listener()
    try:
        socket.create_connection(server.getsockname(), timeout=2).close()
    finally:
        server.close()
    assert no_network.attempts == []


def test_remote_addresses_and_lookups_are_refused(no_network):  # noqa: F811
    with pytest.raises(NetworkBlockedError):
        socket.create_connection(("192.0.2.1", 80), timeout=2)  # TEST-NET-1, never routed
    with pytest.raises(NetworkBlockedError):
        socket.getaddrinfo("example.com", 443)
    with pytest.raises(OSError):
        urllib.request.urlopen("http://example.com/", timeout=2)
    ops = [(a.operation, a.address) for a in no_network.attempts]
    assert ("connect", ("192.0.2.1", 80)) in ops
    assert ("getaddrinfo", "example.com") in ops


def test_guard_is_removed_afterwards():
    from lightagent_contracts import network

    before = socket.socket.connect  # guarded already when the suite blocks every test
    with block_network():
        assert network._depth >= 1 and socket.socket.connect is not network._saved["connect"]
        with block_network():
            pass
        assert network._depth >= 1  # still the outer guard
    assert socket.socket.connect is before
    if network._depth == 0:
        assert socket.socket.connect is network._saved["connect"]


def test_contract_suites_block_the_network_automatically():
    from lightagent_contracts.suites._guard import ContractSuite

    assert "_lightagent_no_network" in ContractSuite.__dict__


def test_ini_option_guards_every_test(tmp_path):
    import subprocess
    import sys

    (tmp_path / "conftest.py").write_text(
        "from lightagent_contracts.network import lightagent_network_policy, pytest_addoption  # noqa: F401\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nlightagent_block_network = true\n")
    (tmp_path / "test_net.py").write_text(
        "import socket, pytest\n"
        "from lightagent_contracts.network import NetworkBlockedError\n"
        "def test_remote():\n"
        "    with pytest.raises(NetworkBlockedError):\n"
        "        socket.create_connection(('192.0.2.1', 80), timeout=1)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
