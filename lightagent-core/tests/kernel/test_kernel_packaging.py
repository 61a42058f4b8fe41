"""Every distribution in the repository declares ``Typing :: Typed`` and ships ``py.typed``.

``make check-dists`` checks the built wheels too, and type-checks the examples against them;
this test catches a new distribution or package that forgets the marker, without a build.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]
# The distributions (one folder each) and the example plugin a third party would copy.
PYPROJECTS = sorted([*ROOT.glob("*/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")])


def test_every_distribution_is_found() -> None:
    names = {tomllib.loads(p.read_text())["project"]["name"] for p in PYPROJECTS}
    assert {"lightagent-core", "lightagent-flow", "lightagent-contracts"} <= names
    assert "lightagent-plugin-hello" in names


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_distribution_is_typed(pyproject: Path) -> None:
    project = tomllib.loads(pyproject.read_text())
    assert "Typing :: Typed" in project["project"].get("classifiers", []), pyproject
    packages = project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    for package in packages:
        marker = pyproject.parent / package / "py.typed"
        assert marker.is_file(), f"{marker.relative_to(ROOT)} is missing"
