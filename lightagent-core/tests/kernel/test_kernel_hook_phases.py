"""Plugins register their own hook phases through the ``lightagent.hook_phases`` entry
point; the kernel reads them only when a phase is not its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from lightagent.hooks import ALL_PHASES, PHASES_GROUP, known_phases


def _dist(root: Path, dist: str, source: str) -> None:
    module = f"{dist.replace('-', '_')}_phases"
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[{PHASES_GROUP}]\n{dist} = {module}:PHASES\n")


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


def test_a_plugin_phase_is_accepted_and_a_bad_one_skipped(tmp_path: Path) -> None:
    _dist(tmp_path, "fake-phases", 'PHASES = ("before_fake_step", "Not A Phase", 3)\n')
    _dist(tmp_path, "broken-phases", 'raise RuntimeError("no phases here")\n')
    out = _run(
        tmp_path,
        """
        import json, sys
        from lightagent.hooks import check_phases, known_phases
        from lightagent_control import HookManager
        from lightagent.errors import ConfigurationError

        class Fake:
            def before_fake_step(self, ctx):
                return None

        HookManager([Fake()])
        check_phases({"before_fake_step"}, "PolicyHook")  # what a PolicyHook's phases= is checked by
        try:
            check_phases({"Not A Phase"}, "PolicyHook")
        except ConfigurationError as exc:
            refused = exc.code
        print(json.dumps({"known": sorted(known_phases()), "refused": refused}))
        """,
    )
    assert "before_fake_step" in out["known"]
    assert "Not A Phase" not in out["known"]
    assert out["refused"] == "LA-HOOK-INVALID"


def test_kernel_phases_read_no_plugin(tmp_path: Path) -> None:
    out = _run(
        tmp_path,
        """
        import json, sys
        from lightagent.hooks import check_phases
        from lightagent_control import HookManager

        class Tools:
            def before_tool_call(self, ctx):
                return None

        HookManager([Tools()])
        check_phases({"before_run"}, "PolicyHook")
        print(json.dumps({"modules": sorted(sys.modules)}))
        """,
    )
    assert "importlib.metadata" not in out["modules"]


def test_known_phases_hold_the_kernels() -> None:
    assert ALL_PHASES <= known_phases()
