"""The provider registry: names, scopes, priorities, conflicts, lazy references."""

from __future__ import annotations

import pytest
from lightagent.errors import ConfigurationError, PluginError
from lightagent.registry import Registry


class Thing:
    pass


def test_duplicate_name_names_both_plugins() -> None:
    reg = Registry()
    reg.register("model", "fast", Thing(), plugin="plugin-a")
    with pytest.raises(PluginError) as err:
        reg.register("model", "fast", Thing(), plugin="plugin-b")
    assert err.value.code == "LA-PLUGIN-CONFLICT"
    assert "plugin-a" in str(err.value) and "plugin-b" in str(err.value)
    assert [c.resolution for c in reg.conflicts()] == ["refused"]


def test_scopes_shadow_and_are_reported() -> None:
    reg = Registry()
    runtime, agent = Thing(), Thing()
    reg.register("memory", "m", runtime, plugin="core")
    reg.register("memory", "m", agent, plugin="app", scope="agent")
    assert reg.resolve("memory", "m") is agent
    (conflict,) = reg.conflicts()
    assert conflict.resolution == "shadowed" and conflict.winner.plugin == "app"
    assert "core" in conflict.describe()
    assert reg.unregister("memory", "m", scope="agent")
    assert reg.resolve("memory", "m") is runtime


def test_priority_then_name_ordering() -> None:
    reg = Registry()
    for name, prio in [("b", 0), ("a", 0), ("c", 5)]:
        reg.register("retrieval", name, Thing(), priority=prio)
    assert reg.names("retrieval") == ["c", "a", "b"]
    assert reg.default("retrieval").name == "c"


def test_resolve_instance_or_lazy_reference() -> None:
    reg = Registry()
    obj = Thing()
    assert reg.resolve("model", obj) is obj
    reg.register("model", "dict", "collections:OrderedDict")
    entry = reg.get("model", "dict")
    assert entry.is_lazy
    import collections

    assert reg.resolve("model", "dict") is collections.OrderedDict
    assert not entry.is_lazy


def test_missing_provider_lists_available() -> None:
    reg = Registry()
    reg.register("model", "one", Thing())
    with pytest.raises(PluginError) as err:
        reg.resolve("model", "two")
    assert err.value.code == "LA-PROVIDER-NOT-FOUND" and "one" in err.value.message


def test_broken_lazy_reference_is_typed() -> None:
    reg = Registry()
    reg.register("model", "ghost", "no_such_module_xyz:Thing")
    with pytest.raises(PluginError) as err:
        reg.resolve("model", "ghost")
    assert err.value.code == "LA-PLUGIN" and "no_such_module_xyz" in err.value.message


@pytest.mark.parametrize(
    ("kind", "name", "provider", "scope"),
    [
        ("Model", "x", Thing(), "runtime"),
        ("model", "", Thing(), "runtime"),
        ("model", "x y", Thing(), "runtime"),
        ("model", "x", None, "runtime"),
        ("model", "x", "not a ref", "runtime"),
        ("model", "x", Thing(), "galaxy"),
    ],
)
def test_bad_registrations_are_typed(kind: str, name: str, provider: object, scope: str) -> None:
    with pytest.raises(ConfigurationError) as err:
        Registry().register(kind, name, provider, scope=scope)
    assert err.value.code == "LA-CONFIG" and err.value.hint


def test_extend_is_all_or_nothing() -> None:
    reg = Registry()
    reg.register("tool", "t2", Thing(), plugin="a")
    other = Registry()
    other.register("tool", "t1", Thing(), plugin="b")
    other.register("tool", "t2", Thing(), plugin="b")
    with pytest.raises(PluginError):
        reg.extend(other.list())
    assert reg.names("tool") == ["t2"]


def test_child_registry_is_isolated() -> None:
    reg = Registry()
    reg.register("tool", "t", Thing())
    child = reg.child()
    child.register("tool", "t", Thing(), scope="agent")
    assert reg.conflicts() == [] and len(child.conflicts()) == 1
