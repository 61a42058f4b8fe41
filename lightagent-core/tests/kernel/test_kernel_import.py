"""``import lightagent`` stays cheap: no heavy dependency, no plugin, no entry-point scan."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "openai",
    "httpx",
    "httpx2",
    "sqlalchemy",
    "mcp",
    "pluggy",
    "psycopg",
    "pydantic",
    "importlib.metadata",
)


def _modules(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def test_import_loads_nothing_heavy() -> None:
    loaded = _modules("import lightagent")
    assert not [
        m
        for m in loaded
        if m.split(".")[0] in {h.split(".")[0] for h in HEAVY if h != "importlib.metadata"}
    ]
    assert "importlib.metadata" not in loaded
    assert not [m for m in loaded if m.startswith("lightagent_")], "a plugin was imported"


def test_errors_are_cheap_too() -> None:
    loaded = _modules("import lightagent; lightagent.LightAgentError; lightagent.ToolError")
    assert "pluggy" not in loaded and "openai" not in loaded


def test_unknown_attribute_is_attribute_error() -> None:
    import lightagent

    try:
        lightagent.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")
