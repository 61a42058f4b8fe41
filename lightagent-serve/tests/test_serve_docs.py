"""The in-process example of docs/serve.md runs and serves."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "serve.md"


def test_create_app_example_runs(serve) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    block = next(b for b in blocks if "create_app" in b)
    namespace: dict = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    served = serve(namespace["app"].state.lightagent.agents, api_key="change-me")
    reply = served.client(api_key="change-me").chat.completions.create(
        model="echo", messages=[{"role": "user", "content": "hello"}]
    )
    assert reply.choices[0].message.content == "hi"
