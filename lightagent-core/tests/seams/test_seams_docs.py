"""The code blocks of the seam pages run, in order, as a reader would run them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.mark.parametrize("page", ["toolsets.md", "memory.md", "retrieval.md"])
def test_code_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # files a page writes (a SQLite pool …) stay out of the tree
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)
    assert blocks, f"{page} has no python block"
    namespace: dict = {"__name__": f"docs_{page}"}
    for block in blocks:
        exec(compile(block, f"docs/{page}", "exec"), namespace)
    agent = namespace.get("agent")
    if agent is not None:
        agent.close()
