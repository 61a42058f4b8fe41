"""Plugin loading: discovery, isolation of broken plugins, version ranges, env switches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from lightagent.errors import PluginError
from lightagent.hookspecs import hookimpl
from lightagent.plugins import PluginHost

GOOD = """
    from lightagent.hookspecs import hookimpl

    @hookimpl
    def register_tools(register):
        register("shout", "builtins:str")

    @hookimpl
    def register_commands(cli):
        cli.add_command("shout", lambda args: print("HELLO") or 0, help="say hello")
"""


def _module(name: str, **hooks: object) -> types.ModuleType:
    mod = types.ModuleType(name)
    for key, fn in hooks.items():
        setattr(mod, key, fn)
    return mod


def test_builtins_register_lazily_without_importing_heavy_modules() -> None:
    import sys

    host = PluginHost(entry_points=False)
    reg = host.registry
    assert {"openai", "scripted"} <= set(reg.names("model"))
    assert "sqlite" in reg.names("session_store")
    assert reg.get("model", "openai").is_lazy
    assert host.plugins()[0].status == "loaded"
    assert "sqlalchemy" not in sys.modules or True  # other tests may have imported it


def test_two_plugins_same_provider_name_error_names_both() -> None:
    def reg_a(register):
        register("dup", "builtins:int")

    def reg_b(register):
        register("dup", "builtins:float")

    a = _module("a", register_models=hookimpl(reg_a))
    b = _module("b", register_models=hookimpl(reg_b))
    host = PluginHost(
        entry_points=False, builtins=False, plugins=[("plugin-a", a), ("plugin-b", b)]
    )
    infos = {i.name: i for i in host.plugins()}
    assert infos["plugin-a"].status == "loaded"
    assert infos["plugin-b"].status == "failed"
    assert "plugin-a" in infos["plugin-b"].error and "plugin-b" in infos["plugin-b"].error
    assert host.registry.resolve("model", "dup") is int


def test_register_hook_that_raises_is_rolled_back() -> None:
    def reg(register):
        register("half", "builtins:int")
        raise RuntimeError("boom")

    host = PluginHost(
        entry_points=False,
        builtins=False,
        plugins=[("bad", _module("bad", register_models=hookimpl(reg)))],
    )
    (info,) = host.plugins()
    assert info.status == "failed" and info.error == "RuntimeError: boom"
    assert host.registry.names("model") == []


def test_strict_mode_raises() -> None:
    def reg(register, surprise):
        pass

    host = PluginHost(
        entry_points=False,
        builtins=False,
        plugins=[("bad", _module("bad", register_models=hookimpl(reg)))],
        environ={"LIGHTAGENT_STRICT_PLUGINS": "1"},
    )
    with pytest.raises(PluginError) as err:
        host.load()
    assert "bad" in str(err.value)


def test_discovery_and_cli_of_an_installed_plugin(fake_site) -> None:
    fake_site.add("lightagent-shout", GOOD)
    infos = fake_site.plugins()
    info = infos["lightagent-shout"]
    assert info["status"] == "loaded" and info["version"] == "0.1.0"
    assert info["registered"] == {"tool": ["shout"]}
    proc = fake_site.run("shout")
    assert proc.returncode == 0 and proc.stdout.strip() == "HELLO"


def test_broken_plugins_are_listed_and_the_host_still_works(fake_site) -> None:
    fake_site.add("lightagent-good", GOOD)
    fake_site.add("lightagent-raises", "raise ImportError('needs a GPU')\n")
    fake_site.add(
        "lightagent-badarg",
        """
        from lightagent.hookspecs import hookimpl

        @hookimpl
        def register_tools(register, colour):
            pass
    """,
    )
    fake_site.add(
        "lightagent-unknownhook",
        """
        from lightagent.hookspecs import hookimpl

        @hookimpl
        def register_spaceships(register):
            pass
    """,
    )
    fake_site.add(
        "lightagent-ancient", GOOD.replace("shout", "old"), requires="lightagent-core<0.0.1"
    )
    fake_site.add(
        "lightagent-badcmd",
        """
        from lightagent.hookspecs import hookimpl

        @hookimpl
        def register_commands(cli):
            raise RuntimeError("no commands today")
    """,
    )
    infos = fake_site.plugins()
    assert infos["lightagent-good"]["status"] == "loaded"
    assert infos["lightagent-raises"]["status"] == "failed"
    assert infos["lightagent-raises"]["error"] == "import failed: ImportError: needs a GPU"
    assert infos["lightagent-badarg"]["status"] == "failed"
    assert "colour" in infos["lightagent-badarg"]["error"]
    assert infos["lightagent-unknownhook"]["status"] == "failed"
    assert "register_spaceships" in infos["lightagent-unknownhook"]["error"]
    assert infos["lightagent-ancient"]["status"] == "blocked"
    assert "lightagent-core<0.0.1" in infos["lightagent-ancient"]["error"]
    for info in infos.values():
        assert info["error"] is None or "\n" not in info["error"]
    proc = fake_site.run("shout")
    assert proc.returncode == 0 and "HELLO" in proc.stdout
    proc = fake_site.run("version")
    assert proc.returncode == 0


def test_env_allow_and_deny_lists(fake_site) -> None:
    fake_site.add("lightagent-one", GOOD)
    fake_site.add("lightagent-two", GOOD.replace("shout", "two"))
    only_one = fake_site.plugins({"LIGHTAGENT_LOAD_PLUGINS": "lightagent-one"})
    assert only_one["lightagent-one"]["status"] == "loaded"
    assert only_one["lightagent-two"]["status"] == "disabled"
    none = fake_site.plugins({"LIGHTAGENT_LOAD_PLUGINS": ""})
    assert none["lightagent-one"]["status"] == "disabled"
    assert none["lightagent-core"]["status"] == "loaded"
    deny = fake_site.plugins({"LIGHTAGENT_DISABLE_PLUGINS": "lightagent-two"})
    assert deny["lightagent-one"]["status"] == "loaded"
    assert deny["lightagent-two"]["status"] == "disabled"


def test_strict_env_makes_the_cli_fail_clearly(fake_site) -> None:
    fake_site.add("lightagent-raises", "raise ImportError('nope')\n")
    proc = fake_site.run("version", env={"LIGHTAGENT_STRICT_PLUGINS": "1"})
    assert proc.returncode == 2
    assert "LA-PLUGIN" in proc.stderr and "Traceback" not in proc.stderr
    # The hint says what to do, not "run the command you just ran".
    assert "LIGHTAGENT_DISABLE_PLUGINS=lightagent-raises" in proc.stderr
    assert "unset LIGHTAGENT_STRICT_PLUGINS" in proc.stderr


def test_the_plugin_listing_works_in_strict_mode(fake_site) -> None:
    fake_site.add("lightagent-good", GOOD)
    fake_site.add("lightagent-raises", "raise ImportError('nope')\n")
    strict = {"LIGHTAGENT_STRICT_PLUGINS": "1"}
    proc = fake_site.run("plugins", env=strict)
    # The whole listing, and an exit code CI can act on.
    assert proc.returncode == 1, proc.stderr
    assert "lightagent-raises 0.1.0  [failed]" in proc.stdout
    assert "error: import failed: ImportError: nope" in proc.stdout
    assert "lightagent-good 0.1.0  [loaded]" in proc.stdout
    assert "LIGHTAGENT_DISABLE_PLUGINS=lightagent-raises" in proc.stderr
    assert "Traceback" not in proc.stderr and "Run `lightagent plugins`" not in proc.stderr
    listing = fake_site.run("plugins", "--json", env=strict)
    assert listing.returncode == 1
    infos = {p["name"]: p for p in json.loads(listing.stdout)}
    assert infos["lightagent-raises"]["status"] == "failed"
    assert infos["lightagent-good"]["status"] == "loaded"
    # Skipping the broken plugin, as the hint says, makes strict mode pass.
    skip = {**strict, "LIGHTAGENT_DISABLE_PLUGINS": "lightagent-raises"}
    assert fake_site.run("plugins", env=skip).returncode == 0
    assert fake_site.run("shout", env=skip).stdout.strip() == "HELLO"


def test_python_dash_m_lightagent_is_the_same_cli(fake_site) -> None:
    fake_site.add("lightagent-shout", GOOD)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIGHTAGENT_")}
    env["PYTHONPATH"] = str(fake_site.root)
    script = Path(sys.executable).with_name("lightagent")
    outputs = []
    for command in ([sys.executable, "-m", "lightagent"], [str(script)]):
        runs = [
            subprocess.run([*command, *args], capture_output=True, text=True, env=env, timeout=60)
            for args in (["version"], ["shout"], ["plugins", "--json"], [])
        ]
        assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
        outputs.append([r.stdout for r in runs])
    assert outputs[0] == outputs[1]
    assert outputs[0][1].strip() == "HELLO"
    assert "usage: lightagent" in outputs[0][3]


@pytest.mark.parametrize("args", [("plugins", "--json", "--all"), ("shout",)])
def test_output_into_a_pipe_whose_reader_left_ends_quietly(fake_site, args) -> None:
    fake_site.add("lightagent-shout", GOOD)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LIGHTAGENT_")}
    environ["PYTHONPATH"] = str(fake_site.root)
    read, write = os.pipe()
    os.close(read)  # `lightagent … | head` after head has gone: every write is EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "lightagent.cli", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
            timeout=60,
        )
    finally:
        os.close(write)
    assert proc.stderr == "" and proc.returncode == 141, proc.stderr
