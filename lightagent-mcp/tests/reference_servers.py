"""Third-party MCP servers for the tests, installed once into cache folders.

npm reference servers: ``LIGHTAGENT_MCP_NPM_DIR`` (default ``~/.cache/lightagent-mcp/npm``);
a machine without ``node``/``npm``, or where the install fails, skips the tests that need
them, saying why. PyPI servers each get a venv of their own under
``LIGHTAGENT_MCP_VENV_DIR`` (default ``~/.cache/lightagent-mcp/venvs``), so their
dependencies (``mcp-server-sqlite`` needs the 1.x ``mcp`` SDK) never meet ours.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

#: Package -> the version the tests were written against.
PACKAGES = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    "@modelcontextprotocol/server-memory": "2026.8.31",
    "@modelcontextprotocol/server-sequential-thinking": "2026.8.31",
}
#: PyPI server -> what its venv installs.
PY_SERVERS = {
    "mcp-server-git": ["mcp-server-git==2026.10.19"],
    "mcp-server-sqlite": ["mcp-server-sqlite==2025.4.25", "mcp>=1.10,<2"],
}


def npm_dir() -> Path:
    default = Path.home() / ".cache" / "lightagent-mcp" / "npm"
    return Path(os.environ.get("LIGHTAGENT_MCP_NPM_DIR") or default)


def entry(package: str) -> Path:
    """The installed package's ``dist/index.js``."""
    return npm_dir() / "node_modules" / package / "dist" / "index.js"


def node_server(package: str, *args: str) -> list[str]:
    """``[node, index.js, *args]`` for ``package``, installing it first when needed (or skip)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the npm reference MCP servers")
    path = entry(package)
    if not path.exists():
        npm_dir().mkdir(parents=True, exist_ok=True)
        specs = [f"{name}@{version}" for name, version in PACKAGES.items()]
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(npm_dir()), *specs],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0 or not path.exists():
            pytest.skip(f"npm could not install {package}: {done.stderr.strip()[-300:]}")
    return [node, str(path), *args]


def venv_dir() -> Path:
    default = Path.home() / ".cache" / "lightagent-mcp" / "venvs"
    return Path(os.environ.get("LIGHTAGENT_MCP_VENV_DIR") or default)


def py_server(name: str) -> str:
    """The ``name`` command in a venv of its own, made first when needed (or skip)."""
    import sys

    home = venv_dir() / name
    command = home / "bin" / name
    if not command.exists():
        home.parent.mkdir(parents=True, exist_ok=True)
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(home)],
            [str(home / "bin" / "python"), "-m", "pip", "install", "-q", *PY_SERVERS[name]],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                pytest.skip(f"could not install {name}: {done.stderr.strip()[-300:]}")
    if not command.exists():
        pytest.skip(f"{name} did not install a {name} command")
    return str(command)
