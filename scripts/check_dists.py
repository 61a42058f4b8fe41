"""Install ``lightagent-core[flow,dag]`` from the built wheels into a fresh venv and check it;
then ``lightagent-core`` alone in another (``scripts/core_alone.py``), and its ``postgres``
extra on top.

The workspace installs every distribution editable, which hides version-range mistakes
between them; only wheels installed the way users install them reveal those. Every wheel
must carry its package's ``py.typed``, and mypy checks the examples against the installed
wheels (so users' type checkers see our types).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Examples that need only what `lightagent-core[flow,dag]` installs.
TYPED_EXAMPLES = [
    "demo.py",
    "dag_example.py",
    "flow_example.py",
    "hello_world.py",
    "streaming.py",
    "tool_example.py",
]


def _run(*cmd: str) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"check-dists: failed: {' '.join(cmd)}")
    return proc.stdout


def _install(py: str, wheelhouse: str, requirement: str) -> None:
    """``pip install requirement`` into the venv of ``py``, from the wheels in ``wheelhouse``."""
    _run(
        py,
        "-m",
        "pip",
        "install",
        "-q",
        "--find-links",
        str(Path(wheelhouse).resolve()),
        requirement,
    )


def main(wheelhouse: str) -> int:
    wheels = sorted(Path(wheelhouse).resolve().glob("*.whl"))
    names = {w.name.split("-")[0] for w in wheels}
    expected = {
        "lightagent_core",
        "lightagent_flow",
        "lightagent_dag",
        "lightagent_mcp",
        "lightagent_rag_fts",
        "lightagent_memory_mem0",
        "lightagent_guardrails",
        "lightagent_otel",
        "lightagent_serve",
        "lightagent_thought",
        "lightagent_devtools",
        "lightagent_swarm",
        "lightagent_runtime",
        "lightagent_memory",
        "lightagent_skills",
        "lightagent_review",
        "lightagent_control",
        "lightagent_dbos",
        "lightagent_selection",
        "lightagent_postgres",
        "lightagent_contracts",
    }
    if missing := expected - names:
        raise SystemExit(f"check-dists: no wheel for {sorted(missing)} in {wheelhouse}")
    for wheel in wheels:
        package = wheel.name.split("-")[0].replace("lightagent_core", "lightagent")
        if f"{package}/py.typed" not in zipfile.ZipFile(wheel).namelist():
            raise SystemExit(f"check-dists: {wheel.name} does not ship {package}/py.typed")
    core = next(w for w in wheels if w.name.startswith("lightagent_core-"))
    version = core.name.split("-")[1]
    with tempfile.TemporaryDirectory(prefix="lightagent-check-dists-") as tmp:
        venv.create(tmp, with_pip=True)
        py = str(Path(tmp) / "bin" / "python")
        _install(py, wheelhouse, f"lightagent-core[flow,dag]=={version}")
        _run(
            py,
            "-c",
            "import lightagent, lightagent_flow, lightagent_dag; print(lightagent.__version__)",
        )
        listing = json.loads(_run(str(Path(tmp) / "bin" / "lightagent"), "plugins", "--json"))
        status = {p["name"]: p["status"] for p in listing}
        for name in ("lightagent-flow", "lightagent-dag", "lightagent-control"):
            if status.get(name) != "loaded":
                raise SystemExit(f"check-dists: {name} is {status.get(name, 'missing')}: {listing}")
        # LightDAG's gate and security contexts are lightagent-control's (a dependency).
        extra = set(status) - {"lightagent-flow", "lightagent-dag", "lightagent-control"}
        if extra:
            raise SystemExit(f"check-dists: unexpected plugins installed: {sorted(extra)}")
        _run(
            sys.executable,
            "-m",
            "mypy",
            "--python-executable",
            py,
            "--cache-dir",
            str(Path(tmp) / "mypy-cache"),
            "--config-file",
            str(ROOT / "pyproject.toml"),
            *(str(ROOT / "examples" / name) for name in TYPED_EXAMPLES),
        )
    with tempfile.TemporaryDirectory(prefix="lightagent-core-alone-") as tmp:
        # the kernel by itself: tools, a durable SQLite session and resume, no plugin
        venv.create(tmp, with_pip=True)
        py = str(Path(tmp) / "bin" / "python")
        _install(py, wheelhouse, f"lightagent-core=={version}")
        listing = json.loads(_run(str(Path(tmp) / "bin" / "lightagent"), "plugins", "--json"))
        if {p["name"] for p in listing} - {"lightagent-core"}:
            raise SystemExit(f"check-dists: lightagent-core alone lists {listing}")
        print(_run(py, str(ROOT / "scripts" / "core_alone.py")).strip())
        # then the `postgres` extra: the dialect arrives as a plugin, found by URL scheme
        _install(py, wheelhouse, f"lightagent-core[postgres]=={version}")
        opened = _run(
            py,
            "-c",
            "from lightagent import SqlSessionStore; "
            "print(type(SqlSessionStore('postgresql+psycopg://u@127.0.0.1:1/db')._db).__name__)",
        )
        if opened.strip() != "PostgresDatabase":
            raise SystemExit(f"check-dists: lightagent-core[postgres] opened {opened!r}")
    print(
        f"check-dists: lightagent-core[flow,dag]=={version} installs from wheels; "
        "`lightagent plugins` lists flow and dag; every wheel ships py.typed; "
        "the examples type-check against the wheels; the core alone, then with [postgres], works"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "dist"))
