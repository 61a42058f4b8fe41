"""Real wheels in fresh virtual environments: plugin discovery, a plugin command, and a
host that survives broken plugins (issue 2, item 4).

Wheels (lightagent-core with its PyPI dependencies, plugin-hello, three broken plugins)
are built once per test session; each test installs them into its own fresh venv with
``--no-index``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.venv, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
BROKEN = {
    "lightagent-broken-import": (
        "lightagent-core>=0.1.0,<0.2",
        "raise RuntimeError('boom while importing')\n",
    ),
    "lightagent-broken-hookarg": (
        "lightagent-core>=0.1.0,<0.2",
        "from lightagent import hookimpl\n\n\n@hookimpl\ndef register_tools(register, nonsense):\n    pass\n",
    ),
    "lightagent-broken-ancient": (
        "lightagent-core<0.0.1",
        "from lightagent import hookimpl\n\n\n@hookimpl\ndef register_tools(register):\n    pass\n",
    ),
}


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LIGHTAGENT_", "PYTHON", "VIRTUAL_ENV"))
    }
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, **kw)
    return proc


def _check(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _write_broken(base: Path, dist: str, requirement: str, source: str) -> Path:
    pkg = dist.replace("-", "_")
    project = base / dist
    (project / "src" / pkg).mkdir(parents=True)
    (project / "src" / pkg / "__init__.py").write_text("")
    (project / "src" / pkg / "plugin.py").write_text(source)
    (project / "README.md").write_text(f"# {dist}\n\nDeliberately broken.\n")
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""
            [build-system]
            requires = ["hatchling>=1.21"]
            build-backend = "hatchling.build"

            [project]
            name = "{dist}"
            version = "0.1.0"
            readme = "README.md"
            dependencies = ["{requirement}"]

            [project.entry-points.lightagent]
            {dist} = "{pkg}.plugin"

            [tool.hatch.build.targets.wheel]
            packages = ["src/{pkg}"]
            """
        )
    )
    return project


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    house = tmp_path_factory.mktemp("wheelhouse")
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "-w", str(house)]
    # lightagent-core and every PyPI dependency it needs, as wheels (pip's cache makes it quick).
    _check(_run([*pip, str(ROOT / "lightagent-core"), str(ROOT / "contracts")]))
    broken_dir = tmp_path_factory.mktemp("broken")
    projects = [_write_broken(broken_dir, d, r, s) for d, (r, s) in BROKEN.items()]
    from lightagent_contracts.connectors.scaffold import new_plugin

    projects.append(new_plugin("skeleton", directory=tmp_path_factory.mktemp("skeleton")))
    _check(_run([*pip, "--no-deps", str(ROOT / "examples" / "plugin-hello"), *map(str, projects)]))
    return house


def _installer(venv: Path, house: Path) -> list[str]:
    python = venv / "bin" / "python"
    return [
        *(sys.executable, "-m", "pip", "--python", str(python), "install", "-q"),
        *("--no-index", "--find-links", str(house)),
    ]


def _venv(tmp_path: Path, house: Path, *requirements: str, no_deps: tuple[str, ...] = ()) -> Path:
    venv = tmp_path / "venv"
    _check(_run([sys.executable, "-m", "venv", "--without-pip", str(venv)]))
    install = _installer(venv, house)
    _check(_run([*install, *requirements]))
    if no_deps:
        _check(_run([*install, "--no-deps", *no_deps]))
    return venv


def _plugins(venv: Path) -> dict[str, dict]:
    proc = _check(_run([str(venv / "bin" / "lightagent"), "plugins", "--json"]))
    return {p["name"]: p for p in json.loads(proc.stdout)}


def test_fresh_venv_discovers_plugin_hello_and_runs_its_command(tmp_path, wheelhouse):
    venv = _venv(
        tmp_path, wheelhouse, "lightagent-core", "lightagent-plugin-hello", "lightagent-skeleton"
    )
    # Without the author kit, its commands name the distribution to install.
    proc = _run([str(venv / "bin" / "lightagent"), "validate-connector", "lightagent-plugin-hello"])
    assert proc.returncode == 2 and "pip install 'lightagent-core[contracts]'" in proc.stderr
    _check(_run([*_installer(venv, wheelhouse), "lightagent-contracts"]))
    plugins = _plugins(venv)
    # The `lightagent new-plugin` skeleton builds, installs and loads as generated.
    assert plugins["lightagent-skeleton"]["status"] == "loaded", plugins["lightagent-skeleton"]
    assert plugins["lightagent-skeleton"]["registered"].get("tool") == ["skeleton_echo"]
    hello = plugins["lightagent-plugin-hello"]
    assert hello["status"] == "loaded", hello
    assert hello["version"] == "0.1.0"
    assert hello["registered"].get("tool") == ["hello"]
    proc = _check(_run([str(venv / "bin" / "lightagent"), "hello", "Ada"]))
    assert proc.stdout.strip() == "Hello, Ada!"
    # The installed wheel (not a source tree) also passes the validator.
    proc = _run([str(venv / "bin" / "lightagent"), "validate-connector", "lightagent-plugin-hello"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS lightagent-plugin-hello" in proc.stdout


def test_broken_plugins_are_reported_and_the_host_keeps_working(tmp_path, wheelhouse):
    venv = _venv(
        tmp_path,
        wheelhouse,
        "lightagent-core",
        "lightagent-plugin-hello",
        "lightagent-broken-import",
        "lightagent-broken-hookarg",
        # pip itself would refuse a plugin that excludes the installed core: force it in.
        no_deps=("lightagent-broken-ancient",),
    )
    plugins = _plugins(venv)
    for name in BROKEN:
        info = plugins[name]
        assert info["status"] in {"failed", "blocked"}, info
        assert info["error"] and "\n" not in info["error"], info
        assert info["registered"] == {} or not any(info["registered"].values()), info
    assert "boom while importing" in plugins["lightagent-broken-import"]["error"]
    assert "nonsense" in plugins["lightagent-broken-hookarg"]["error"]
    assert "0.0.1" in plugins["lightagent-broken-ancient"]["error"]
    assert plugins["lightagent-plugin-hello"]["status"] == "loaded", plugins[
        "lightagent-plugin-hello"
    ]
    lightagent = str(venv / "bin" / "lightagent")
    assert _check(_run([lightagent, "hello"])).stdout.strip() == "Hello, world!"
    assert "lightagent-core" in _check(_run([lightagent, "version"])).stdout
    text = _check(_run([lightagent, "plugins"])).stdout
    assert text.count("error:") == len(BROKEN)
