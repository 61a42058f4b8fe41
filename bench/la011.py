"""The PyPI ``lightagent==0.11.0`` environment the comparison benchmarks measure against.

Installed once into ``bench/.work/venv-la011`` (it pulls its own heavy dependencies),
only to run it side by side with this project; none of its code is used here.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

VENV = Path(__file__).resolve().parent / ".work" / "venv-la011"


def la011_python() -> str | None:
    """The venv's python with ``lightagent==0.11.0`` importable, installing it if needed; None on failure."""
    python = VENV / "bin" / "python"
    if not python.exists():
        venv.create(VENV, with_pip=True)
    if (
        subprocess.run([str(python), "-c", "import LightAgent"], capture_output=True).returncode
        == 0
    ):
        return str(python)
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "lightagent==0.11.0"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return None
    return str(python)
