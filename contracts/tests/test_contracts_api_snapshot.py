"""The public API of every distribution and the hookspecs match contracts/snapshots/."""

from __future__ import annotations

import json
import subprocess
import sys

from lightagent_contracts.api_snapshot import UPDATE_COMMAND, diff_snapshot


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightagent_contracts.api_snapshot", *args],
        capture_output=True,
        text=True,
    )


def test_public_api_matches_the_snapshots():
    # In a subprocess: describing every public name imports every module, which this
    # test process should not inherit.
    proc = _run()
    assert proc.returncode == 0, (
        f"The public API differs from contracts/snapshots/:\n{proc.stdout}{proc.stderr}\n"
        f"If the change is intended, run: {UPDATE_COMMAND}"
    )


def _snap(version, **names):
    return {"distribution": "lightagent-x", "version": version, "names": names}


def test_additions_and_changes_are_reported():
    old = _snap("0.1.0", a={"kind": "function", "signature": "def(x)"})
    new = _snap("0.1.0", a={"kind": "function", "signature": "def(x, y)"}, b={"kind": "module"})
    lines = diff_snapshot(old, new)
    assert "lightagent-x: added b" in lines
    assert 'lightagent-x: changed a: signature: "def(x)" -> "def(x, y)"' in lines
    assert diff_snapshot(old, old) == []


def test_removal_needs_a_version_bump():
    old = _snap("0.1.0", a={"kind": "module"}, b={"kind": "module"})
    same_version = _snap("0.1.0", a={"kind": "module"})
    (line,) = diff_snapshot(old, same_version)
    assert "removes b without a version bump" in line
    bumped = _snap("0.2.0", a={"kind": "module"})
    assert diff_snapshot(old, bumped) == ["lightagent-x: removed b"]


def test_update_then_check_round_trip_and_refuses_unbumped_removal(tmp_path):
    only = ("--only", "lightagent-contracts", "--dir", str(tmp_path))
    assert _run("--update", *only).returncode == 0
    assert _run(*only).returncode == 0
    core = tmp_path / "lightagent-contracts.json"
    data = json.loads(core.read_text())
    data["names"]["NoLongerThere"] = {"kind": "module"}  # as if a name had been removed
    core.write_text(json.dumps(data))
    check = _run(*only)
    assert check.returncode == 1
    assert "removes NoLongerThere without a version bump" in check.stdout
    assert UPDATE_COMMAND in check.stdout
    assert _run("--update", *only).returncode == 1
    assert _run("--update", "--allow-removal", *only).returncode == 0
    hooks = json.loads((tmp_path / "hookspecs.json").read_text())["names"]
    assert hooks["register_tools"]["args"] == ["register"]


def test_class_changes_name_the_members():
    members_old = {"a": "def(self)", "b": "def(self)"}
    members_new = {"a": "def(self, x)", "c": "property"}
    old = _snap("0.1.0", C={"kind": "class", "signature": "()", "members": members_old})
    new = _snap("0.1.0", C={"kind": "class", "signature": "()", "members": members_new})
    (line,) = diff_snapshot(old, new)
    assert line == (
        "lightagent-x: changed C: members removed b; members added c; "
        "members.a: def(self) -> def(self, x)"
    )
