"""lightagent-devtools reaches lightagent through its plugin: the ``trace`` command and the
names exported from ``lightagent``; without it they are typed errors naming the extra."""

from __future__ import annotations

import subprocess
import sys

import lightagent
import lightagent_devtools
from lightagent.cli import build_parser


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)


# Makes lightagent-devtools look uninstalled: importing it fails as it would.
HIDE = "import sys; sys.modules['lightagent_devtools'] = None\n"


def test_the_plugin_registers_the_trace_command() -> None:
    _, commands = build_parser(argv=["plugins"])
    assert commands.commands["trace"].plugin == "lightagent-devtools"


def test_the_names_are_exported_from_lightagent() -> None:
    for name in lightagent_devtools.__all__:
        if name != "__version__":
            assert getattr(lightagent, name) is getattr(lightagent_devtools, name)


def test_without_the_distribution_each_name_names_the_extra() -> None:
    names = ("LightEvaluator", "EvaluationCase", "EvaluationCaseResult", "EvaluationReport",
             "render_trace_page")  # fmt: skip
    proc = _run(
        "-c",
        HIDE
        + "import lightagent\n"
        + f"for name in {names!r}:\n"
        + "    try:\n"
        + "        getattr(lightagent, name)\n"
        + "    except ImportError as exc:\n"
        + "        print(exc.code, exc.details['install'], sep='|')\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        proc.stdout.splitlines() == ["LA-MISSING-EXTRA|pip install 'lightagent-core[devtools]'"] * 5
    )


def test_without_the_distribution_the_trace_command_names_the_extra() -> None:
    proc = _run(
        "-c",
        HIDE + "import sys; from lightagent.cli import main; sys.exit(main(sys.argv[1:]))",
        "trace",
        "view",
        "s",
        "--store",
        "sqlite:///x.db",
        "--output",
        "x.html",
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "[LA-MISSING-EXTRA]" in proc.stderr and "lightagent-devtools" in proc.stderr
    assert "pip install 'lightagent-core[devtools]'" in proc.stderr
    assert "Traceback" not in proc.stderr
