"""The npm reference MCP servers for the tests, installed once into a cache folder.

``LIGHTAGENT_MCP_NPM_DIR`` names the folder (default ``~/.cache/lightagent-mcp/npm``);
``.ci/run`` may fill it beforehand. A machine without ``node``/``npm``, or where the
install fails, skips the tests that need them, saying why.
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
