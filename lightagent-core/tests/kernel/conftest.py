"""Helpers for kernel tests: fake installed plugins as ``.dist-info`` folders on a path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


class FakeSite:
    """A folder that looks like site-packages to ``importlib.metadata``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def add(
        self,
        dist: str,
        source: str,
        *,
        requires: str = "lightagent-core>=0.1,<0.2",
        module: str | None = None,
        version: str = "0.1.0",
    ) -> None:
        module = module or dist.replace("-", "_")
        (self.root / f"{module}.py").write_text(textwrap.dedent(source))
        info = self.root / f"{module}-{version}.dist-info"
        info.mkdir()
        requires_line = f"Requires-Dist: {requires}\n" if requires else ""
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n{requires_line}"
        )
        (info / "entry_points.txt").write_text(f"[lightagent]\n{dist} = {module}\n")

    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("LIGHTAGENT_")}
        environ["PYTHONPATH"] = str(self.root)
        environ.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "lightagent.cli", *args],
            capture_output=True,
            text=True,
            env=environ,
            timeout=60,
        )

    def plugins(self, env: dict[str, str] | None = None) -> dict[str, dict]:
        proc = self.run("plugins", "--json", "--all", env=env)
        assert proc.returncode == 0, proc.stderr
        return {p["name"]: p for p in json.loads(proc.stdout)}


@pytest.fixture
def fake_site(tmp_path: Path) -> FakeSite:
    return FakeSite(tmp_path)
