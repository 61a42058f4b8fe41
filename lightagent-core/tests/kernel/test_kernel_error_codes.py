"""Plugins register their own ``LA-…`` codes through the ``lightagent.error_codes`` entry
point; the taxonomy reads them only when a code is not the kernel's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from lightagent.error_codes import CODES, CODES_GROUP, plugin_codes, valid_row
from lightagent.errors import ERROR_TAXONOMY, ErrorTaxonomy, LightAgentError


def _dist(root: Path, dist: str, source: str) -> None:
    """A fake installed distribution whose module ``<dist>_codes`` holds ``CODES``."""
    module = f"{dist.replace('-', '_')}_codes"
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[{CODES_GROUP}]\n{dist} = {module}:CODES\n")


def _run(root: Path, code: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LIGHTAGENT_")}
    environ["PYTHONPATH"] = str(root)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_kernel_code_reads_no_plugin(tmp_path: Path) -> None:
    out = _run(
        tmp_path,
        """
        import json, sys
        from lightagent import LightAgentError, format_error_code
        err = LightAgentError("LA-TOOL", "boom")
        format_error_code("LA-CONFIG")
        print(json.dumps({"code": err.code, "modules": sorted(sys.modules)}))
        """,
    )
    assert out["code"] == "LA-TOOL"
    assert "importlib.metadata" not in out["modules"]
    assert not [m for m in out["modules"] if m.startswith("lightagent_")]


def test_a_plugin_code_is_known_everywhere(tmp_path: Path) -> None:
    _dist(
        tmp_path,
        "fake-codes",
        """
        CODES = (
            ("LA-FAKE-ONE", "fake", "A fake thing failed.", "Fix the fake thing."),
            ("LA-TOOL", "fake", "Not the kernel's row.", "Ignored: the kernel's row wins."),
            ("NOT-A-CODE", "fake", "Skipped.", "Skipped."),
            ("LA-FAKE-SHORT", "fake"),
        )
        """,
    )
    out = _run(
        tmp_path,
        """
        import json
        from lightagent.errors import ERROR_TAXONOMY, LightAgentError, format_error_code
        err = LightAgentError("LA-FAKE-ONE")
        print(json.dumps({
            "error": err.to_dict(),
            "text": format_error_code("LA-FAKE-ONE"),
            "tool": ERROR_TAXONOMY["LA-TOOL"].family,
            "codes": list(ERROR_TAXONOMY),
        }))
        """,
    )
    assert out["error"]["code"] == "LA-FAKE-ONE"
    assert out["error"]["hint"] == "Fix the fake thing."
    assert out["text"].startswith("[LA-FAKE-ONE] A fake thing failed.")
    assert out["tool"] == "tool"
    assert "LA-FAKE-ONE" in out["codes"]
    assert "NOT-A-CODE" not in out["codes"] and "LA-FAKE-SHORT" not in out["codes"]


def test_a_broken_table_is_skipped_and_never_recurses(tmp_path: Path) -> None:
    # Loading this table raises an error whose code nobody knows: the lookup it makes
    # while the plugins' tables load must not load them again.
    _dist(
        tmp_path,
        "broken-codes",
        """
        from lightagent.errors import LightAgentError
        raise LightAgentError("LA-BROKEN-WHILE-LOADING", "no table here")
        """,
    )
    _dist(
        tmp_path,
        "good-codes",
        """
        CODES = [("LA-GOOD", "fake", "Good.", "Fine.")]
        """,
    )
    out = _run(
        tmp_path,
        """
        import json
        from lightagent.errors import LightAgentError
        print(json.dumps({
            "unknown": LightAgentError("LA-NOBODY", "x").to_dict(),
            "good": LightAgentError("LA-GOOD").code,
        }))
        """,
    )
    assert out["unknown"]["code"] == "LA-UNKNOWN"
    assert out["unknown"]["details"] == {"original_code": "LA-NOBODY"}
    assert out["good"] == "LA-GOOD"


def test_the_taxonomy_is_a_dict_holding_kernel_and_plugin_codes() -> None:
    assert isinstance(ERROR_TAXONOMY, dict)
    assert {row[0] for row in CODES} | {row[0] for row in plugin_codes()} == set(ERROR_TAXONOMY)
    assert all(valid_row(row) for row in plugin_codes())
    fresh = ErrorTaxonomy([("LA-UNKNOWN", "unknown", "Unexpected.", "See details.")])
    assert fresh.get("LA-NOPE") is None and "LA-NOPE" not in fresh
    assert LightAgentError("LA-NOPE").code == "LA-UNKNOWN"
