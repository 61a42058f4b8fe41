"""``scripts/check_core.py`` (run by ``make lint``): the kernel's size ceiling, and no
plugin's import name anywhere in the kernel, not even in a string."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "check_core.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_core", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.importlinter]
            root_packages = ["lightagent", "lightagent_flow", "lightagent_dag"]
            """
        )
    )
    for name, text in files.items():
        path = root / "lightagent-core" / "src" / "lightagent" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_a_clean_kernel_passes(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": '"""Install lightagent-flow for flows."""\nimport lightagent.errors\n',
            "errors.py": 'NAME = "lightagent_flowers"  # another word, not the plugin\n',
        },
    )
    script = _script()
    assert script.plugin_packages(root) == ["lightagent_dag", "lightagent_flow"]
    assert script.check(root) == []
    assert script.count_lines(script.core_files(root)) == 3


def test_a_plugin_name_fails_in_an_import_a_string_or_a_comment(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "a.py": "import lightagent_dag\n",
            "b.py": 'REF = "lightagent_flow.plugin:LightFlow"\n',
            "sub/c.py": "# see lightagent_dag.verifiers\n",
        },
    )
    problems = _script().check(root)
    assert len(problems) == 3
    assert problems[0].startswith("lightagent-core/src/lightagent/a.py:1: lightagent_dag")
    assert "lightagent/b.py:1: lightagent_flow" in problems[1]
    assert "lightagent/sub/c.py:1: lightagent_dag" in problems[2]


def test_the_ceiling_counts_lines_like_wc(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"big.py": "x = 1\n" * 50})
    script = _script()
    assert script.check(root, ceiling=50) == []
    (problem,) = script.check(root, ceiling=49)
    assert "50 lines" in problem and "49" in problem


def test_the_command_line_exits_1_on_a_problem(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"a.py": "import lightagent_flow\n"})
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and "lightagent_flow" in proc.stderr
    clean = _tree(tmp_path / "clean", {"a.py": "import lightagent\n"})
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(clean)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def test_this_kernel_names_no_plugin() -> None:
    script = _script()  # (the size ceiling is make lint's to enforce)
    assert script.plugin_mentions(ROOT, script.plugin_packages(ROOT)) == []
