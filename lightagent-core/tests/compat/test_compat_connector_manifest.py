"""Item 7 of issue 18: the seeds' ConnectorManifest (positional, component objects) and
``validate_connector(manifest, base_path=...)``."""

from __future__ import annotations

import pytest
from lightagent.manifest import ConnectorManifest


def get_weather(city_name: str) -> str:
    return city_name


get_weather.tool_info = {"tool_name": "get_weather", "tool_description": "w", "tool_params": []}


def untagged(x: str) -> str:
    return x


class AuditHook:
    name = "audit"

    def before_run(self, ctx):
        raise AssertionError("inspected, never invoked")


class Memory:
    def store(self, *a):
        raise AssertionError("never invoked")

    def retrieve(self, *a):
        raise AssertionError("never invoked")


def test_seeds_manifest_with_objects_is_inspected_not_invoked() -> None:
    manifest = ConnectorManifest(
        "weather-connector",
        "0.1.0",
        description="Weather tools",
        tools=[get_weather],
        hooks=[AuditHook()],
        memory_adapters={"notes": Memory()},
    )
    assert manifest.name == "weather-connector" and manifest.version == "0.1.0"
    assert manifest.tools == ("get_weather",)
    assert manifest.hooks == ("audit",)
    assert manifest.memory_adapters == ("notes",)
    assert manifest.component_problems == ()
    assert manifest.declared()["tool"] == ("get_weather",)
    # The keyword form of names is unchanged.
    assert ConnectorManifest(name="x", version="1.0", tools=["a"]).tools == ("a",)


def test_component_problems_are_reported() -> None:
    manifest = ConnectorManifest(
        "bad", "0.1.0", tools=[untagged], hooks=[object()], memory_adapters={"m": object()}
    )
    fields = {p["field"] for p in manifest.component_problems}
    assert fields == {"tools", "hooks", "memory_adapters"}


def test_validate_connector_accepts_base_path(tmp_path) -> None:
    contracts = pytest.importorskip("lightagent_contracts")
    (tmp_path / "README.md").write_text("# docs\n")
    good = ConnectorManifest("weather", "0.1.0", description="d", docs=["README.md"])
    report = contracts.validate_connector(good, base_path=tmp_path)
    assert not [f for f in report.findings if f.level == "error"], report.findings
    missing = contracts.validate_connector(
        ConnectorManifest("weather", "0.1.0", description="d", docs=["NOPE.md"]), base_path=tmp_path
    )
    assert "LAV096" in {f.code for f in missing.findings}
    bad = contracts.validate_connector(
        ConnectorManifest("weather", "0.1.0", description="d", tools=[untagged]), base_path=tmp_path
    )
    assert "LAV015" in {f.code for f in bad.findings}


def test_a_bad_manifest_built_directly_is_a_typed_error() -> None:
    from lightagent.errors import ValidationError

    with pytest.raises(ValidationError) as info:
        ConnectorManifest("weather", "one", tools=[get_weather])
    assert info.value.code == "LA-VALIDATION" and info.value.hint
    assert {p["field"] for p in info.value.details["problems"]} == {"version"}
    assert "docs/" not in info.value.hint  # an author installing from an index has no docs/
