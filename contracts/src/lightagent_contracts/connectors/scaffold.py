"""``lightagent new-plugin NAME``: a ready-to-publish plugin project that validates as generated."""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from lightagent.errors import ConfigurationError

__all__ = ["new_plugin", "plugin_names"]

_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def plugin_names(name: str) -> tuple[str, str]:
    """``(distribution, import package)`` for ``name``: ``weather`` -> ``lightagent-weather``, ``lightagent_weather``."""
    raw = name.strip().lower().replace("_", "-")
    base = raw.removeprefix("lightagent-")
    if not base or not _NAME.match(base) or len(base) > 60:
        raise ConfigurationError(
            "LA-CONFIG",
            f"invalid plugin name {name!r}",
            hint="Use lowercase letters, digits and dashes, starting with a letter, e.g. `weather` or `acme-search`.",
        )
    dist = f"lightagent-{base}"
    return dist, dist.replace("-", "_")


def _core_range() -> str:
    from lightagent import __version__

    major, minor = (int(p) for p in __version__.split(".")[:2])
    # Before 1.0 a minor release may break plugins, so admit one minor series.
    return (
        f">={major}.{minor}.0,<{major}.{minor + 1}"
        if major == 0
        else f">={major}.{minor},<{major + 1}"
    )


_PYPROJECT = Template("""\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "$dist"
version = "0.1.0"
description = "A lightagent plugin: $title."
readme = "README.md"
requires-python = ">=3.10"
license = "Apache-2.0"
classifiers = ["Programming Language :: Python :: 3"]
dependencies = ["lightagent-core$core"]

[project.optional-dependencies]
test = ["lightagent-contracts$core", "pytest>=7.4"]

[project.entry-points.lightagent]
$dist = "$pkg.plugin"

[tool.hatch.build.targets.wheel]
packages = ["src/$pkg"]

[tool.pytest.ini_options]
pythonpath = ["src"]
""")

_INIT = Template('''\
"""$dist: a lightagent plugin."""

__version__ = "0.1.0"
__all__ = ["__version__"]
''')

_PLUGIN = Template('''\
"""The lightagent plugin of $dist: module-level hook implementations.

Hooks only register objects; the objects do the work. Import heavy dependencies inside
your tools, never at module level: `lightagent validate-connector` fails slow imports.
"""

from __future__ import annotations

from typing import Any

from lightagent import ConnectorManifest, hookimpl, tool

from $pkg import __version__


@tool
def $tool(text: str) -> str:
    """Return the text unchanged (replace this with your own tool)."""
    return text


@hookimpl
def register_tools(register: Any) -> None:
    """Register this plugin's tools."""
    register("$tool", $tool)


@hookimpl
def lightagent_manifest() -> ConnectorManifest:
    """What this plugin brings, checked by `lightagent validate-connector`."""
    return ConnectorManifest(
        name="$dist",
        version=__version__,
        description="A lightagent plugin: $title.",
        tools=("$tool",),
        core_requires="$core",
    )
''')

_TEST = Template('''\
"""The standard tool contract for $dist (from lightagent-contracts)."""

import pytest
from lightagent_contracts.suites.tool_provider import ToolProviderContract

from $pkg.plugin import $tool


class TestToolContract(ToolProviderContract):
    @pytest.fixture
    def tools(self):
        return [$tool]

    @pytest.fixture
    def tool_examples(self):
        return [("$tool", {"text": "hello"}, lambda result: result == "hello")]
''')

_README = Template("""\
# $dist

A [lightagent](https://pypi.org/project/lightagent-core/) plugin: $title.

## Install

```bash
pip install $dist
lightagent plugins          # lists $dist as loaded
```

## What it registers

| kind | name | what |
|---|---|---|
| tool | `$tool` | returns the text unchanged |

```python
from lightagent import LightAgent, get_registry

echo = get_registry().resolve("tool", "$tool")
agent = LightAgent(model="gpt-4o-mini", tools=[echo])
```

## Develop

```bash
pip install -e ".[test]"
pytest                                  # the lightagent-contracts tool suite
lightagent validate-connector .         # offline checks before publishing
```
""")


def new_plugin(name: str, *, directory: str | Path = ".", force: bool = False) -> Path:
    """Write the skeleton of plugin ``name`` under ``directory``; returns the project folder.

    Raises :class:`ConfigurationError` (``LA-CONFIG``) for an invalid name or a
    non-empty target folder (unless ``force``).
    """
    dist, pkg = plugin_names(name)
    project = Path(directory).expanduser() / dist
    if project.exists() and any(project.iterdir()) and not force:
        raise ConfigurationError(
            "LA-CONFIG",
            f"{project} exists and is not empty",
            hint="Choose another --dir, or pass --force to write into it.",
        )
    values = {
        "dist": dist,
        "pkg": pkg,
        "tool": f"{pkg.removeprefix('lightagent_')}_echo",
        "title": dist.removeprefix("lightagent-").replace("-", " "),
        "core": _core_range(),
    }
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"src/{pkg}/__init__.py": _INIT,
        f"src/{pkg}/plugin.py": _PLUGIN,
        f"tests/test_{pkg}_contract.py": _TEST,
    }
    for relative, template in files.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.substitute(values), encoding="utf-8")
    return project
