"""User ask 26 (shared/research/user-asks.md): one plugin must not slow every command down.

Importing LightFlow (and its plugin module, which ``lightagent plugins`` loads) pulls in no
model client, database driver or validation library; those load when a run needs them.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = {"openai", "httpx", "sqlalchemy", "psycopg", "mcp", "pydantic"}


def test_importing_lightflow_and_its_plugin_loads_nothing_heavy() -> None:
    code = (
        "import sys, json, lightagent_flow, lightagent_flow.plugin; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert loaded & HEAVY == set()
