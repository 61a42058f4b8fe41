"""Plugins own their hookspecs; the hooks that left the kernel keep working for one minor
version with a DeprecationWarning; validate-connector knows where each hook lives."""

from __future__ import annotations

import types
import warnings

import pytest
from lightagent import hookimpl, hookspec
from lightagent.hookspecs import REGISTER_HOOKS
from lightagent.plugins import PluginHost, declared_hookspecs


def _module(name, **attrs):
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    return module


def _owner(name="widget-owner", args=("register",)):
    namespace = {}
    exec(
        f"def register_widgets({', '.join(args)}):\n    'Register widgets.'\n",
        namespace,
    )
    specs = _module("specs", register_widgets=hookspec(namespace["register_widgets"]))

    @hookimpl
    def register_hookspecs(add):
        add(specs, kinds={"widget": "register_widgets"})

    return name, _module(name, register_hookspecs=register_hookspecs)


def _user(name="widget-user", widget="gear"):
    @hookimpl
    def register_widgets(register):
        register(widget, "builtins:dict")

    return name, _module(name, register_widgets=register_widgets)


def test_kernel_hookspecs_name_kernel_concepts_only():
    assert not {"workflow", "verifier", "artifact_store"} & set(REGISTER_HOOKS)
    from lightagent import hookspecs

    for hook in ("register_workflows", "register_verifiers", "register_artifact_stores"):
        assert not hasattr(hookspecs, hook)


@pytest.mark.parametrize("order", ["owner-first", "user-first"])
def test_a_plugin_implements_another_plugins_hook_in_any_load_order(order):
    owner, user = _owner(), _user()
    plugins = [owner, user] if order == "owner-first" else [user, owner]
    host = PluginHost(entry_points=False, builtins=False, plugins=plugins)
    infos = {i.name: i for i in host.plugins()}
    assert infos["widget-user"].status == "loaded", infos["widget-user"].error
    assert infos["widget-owner"].hookspecs == ["register_widgets"]
    assert host.registry.resolve("widget", "gear") is dict
    assert host.register_hooks["widget"] == "register_widgets"


def test_same_hook_declared_twice_must_agree():
    a, b = _owner("owner-a"), _owner("owner-b")
    host = PluginHost(entry_points=False, builtins=False, plugins=[a, b, _user()])
    infos = {i.name: i for i in host.plugins()}
    assert infos["owner-b"].status == "loaded"
    bad = _owner("owner-c", args=("register", "extra"))
    host = PluginHost(entry_points=False, builtins=False, plugins=[a, bad])
    infos = {i.name: i for i in host.plugins()}
    assert infos["owner-c"].status == "failed" and "register_widgets" in infos["owner-c"].error


def test_a_hook_nobody_declares_fails_the_plugin():
    host = PluginHost(entry_points=False, builtins=False, plugins=[_user()])
    info = host.plugins()[0]
    assert info.status == "failed" and "register_widgets" in info.error


def test_moved_hooks_work_without_their_owner_with_a_deprecation_warning():
    @hookimpl
    def register_verifiers(register):
        register("always", "builtins:bool")

    legacy = _module("legacy", register_verifiers=register_verifiers)
    host = PluginHost(entry_points=False, builtins=False, plugins=[("legacy-plugin", legacy)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = host.registry
    assert registry.resolve("verifier", "always") is bool
    assert any(
        issubclass(w.category, DeprecationWarning) and "lightagent-dag" in str(w.message)
        for w in caught
    )
    info = host.plugins()[0]
    assert info.status == "loaded" and "lightagent-dag" in info.warnings[0]


def test_with_the_owner_installed_there_is_no_warning():
    from lightagent_dag import plugin as dag_plugin

    @hookimpl
    def register_verifiers(register):
        register("always", "builtins:bool")

    user = _module("user", register_verifiers=register_verifiers)
    host = PluginHost(
        entry_points=False, plugins=[("lightagent-dag", dag_plugin), ("dag-user", user)]
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = host.registry
    assert not [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert {"always"} <= set(registry.names("verifier"))
    assert "lightdag" in registry.names("workflow")
    infos = {i.name: i for i in host.plugins()}
    assert infos["dag-user"].warnings == []


def test_declared_hookspecs_lists_kernel_moved_and_plugin_hooks():
    table = declared_hookspecs([_owner()[1]])
    assert table["register_toolsets"] == ["register"]
    assert table["register_verifiers"] == ["register"]
    assert table["register_widgets"] == ["register"]


def test_validate_connector_knows_the_new_place(fake_site):
    fake_site.add(
        "lightagent-oldverifier",
        """
        from lightagent import hookimpl

        @hookimpl
        def register_verifiers(register):
            register("always", "builtins:bool")
        """,
    )
    (fake_site.root / "widget_specs.py").write_text(
        "from lightagent import hookspec\n\n\n@hookspec\ndef register_widgets(register):\n"
        "    'Register widgets.'\n"
    )
    fake_site.add(
        "lightagent-widgets",
        """
        from lightagent import hookimpl

        @hookimpl
        def register_hookspecs(add):
            import widget_specs
            add(widget_specs, kinds={"widget": "register_widgets"})

        @hookimpl
        def register_widgets(register):
            register("gear", "builtins:dict")
        """,
    )
    old = fake_site.run("validate-connector", "lightagent-oldverifier")
    assert "LAV036" in old.stdout and "lightagent-dag" in old.stdout, old.stdout + old.stderr
    assert "LAV030" not in old.stdout
    new = fake_site.run("validate-connector", "lightagent-widgets")
    assert "LAV030" not in new.stdout and "LAV031" not in new.stdout, new.stdout + new.stderr
