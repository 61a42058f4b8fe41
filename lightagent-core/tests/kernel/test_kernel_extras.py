"""Names and commands that other distributions provide: a typed error naming the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lightagent
import pytest
from lightagent.errors import LightAgentError, MissingExtraError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

CORE = Path(__file__).resolve().parents[2]


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )


# Makes the author kit look uninstalled: `import lightagent_contracts` fails as it would.
HIDE_KIT = "import sys; sys.modules['lightagent_contracts'] = None\n"


def test_every_seeds_name_of_a_distribution_names_an_extra_of_the_core():
    from importlib.metadata import entry_points

    from lightagent import vocabulary

    extras = tomllib.loads((CORE / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    exported = {ep.name: ep for ep in entry_points(group="lightagent.exports")}
    tables = [vocabulary.EXPORTS, vocabulary.ATTRIBUTES]
    tables += [
        {k: v[0] for k, v in t.items()} for t in (vocabulary.KEYWORDS, vocabulary.RUN_OPTIONS)
    ]
    assert vocabulary.EXPORTS, "the table has no rows to check"
    for table in tables:
        for name, extra in table.items():
            assert extra in extras, f"{name}: lightagent-core has no [{extra}] extra"
            dist = vocabulary.distribution(extra)
            assert any(req.startswith(dist) for req in extras[extra]), (name, extras[extra])
    for name, extra in vocabulary.EXPORTS.items():  # every distribution is installed here
        assert name in exported, f"{name}: no lightagent.exports entry point provides it"
        assert exported[name].dist.name == vocabulary.distribution(extra), name


def test_the_kernel_exports_only_its_own_modules():
    assert all(where.startswith("lightagent.") for where in lightagent._EXPORTS.values())


def test_a_name_of_a_missing_distribution_is_a_typed_import_error():
    proc = _run(
        HIDE_KIT
        + "import lightagent\n"
        + "try:\n    from lightagent import validate_connector\n"
        + "except ImportError as exc:\n"
        + "    print(type(exc).__name__, exc.code, exc.details['install'], exc.hint, sep='|')\n"
    )
    assert proc.returncode == 0, proc.stderr
    kind, code, install, hint = proc.stdout.strip().split("|")
    assert (kind, code) == ("MissingExtraError", "LA-MISSING-EXTRA")
    assert install == "pip install 'lightagent-core[contracts]'"
    assert "lightagent-contracts" in hint


def test_missing_extra_error_is_a_lightagent_error_and_an_import_error():
    assert issubclass(MissingExtraError, LightAgentError)
    assert issubclass(MissingExtraError, ImportError)
    exc = MissingExtraError("LA-MISSING-EXTRA", "x is missing", hint="pip install y")
    assert str(exc) == "[LA-MISSING-EXTRA] x is missing Hint: pip install y"


def test_a_broken_installed_distribution_is_not_reported_as_missing():
    from lightagent.extras import import_extra

    with pytest.raises(ModuleNotFoundError) as info:
        import_extra("lightagent_contracts.no_such_module", "lightagent-contracts", "contracts")
    assert not isinstance(info.value, MissingExtraError)


@pytest.mark.parametrize("command", ["validate-connector", "new-plugin"])
def test_an_author_command_without_the_kit_names_the_distribution(command):
    proc = _run(
        HIDE_KIT + "import sys; from lightagent.cli import main; sys.exit(main(sys.argv[1:]))",
        command,
        "x",
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "[LA-MISSING-EXTRA]" in proc.stderr
    assert "lightagent-contracts" in proc.stderr
    assert "pip install 'lightagent-core[contracts]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_kit_registers_the_author_commands():
    from lightagent.cli import build_parser

    _, commands = build_parser(argv=["plugins"])
    for name in ("validate-connector", "new-plugin"):
        assert commands.commands[name].plugin == "lightagent-contracts"


def test_guardrails_without_their_distribution_name_the_extra():
    proc = _run(
        "import sys; sys.modules['lightagent_guardrails'] = None\n"
        "from lightagent import LightAgent, ScriptedModel\n"
        "agent = LightAgent(model=ScriptedModel(['hi']))\n"
        "print(agent.run('no guardrails: no plugin needed'))\n"
        "try:\n"
        "    LightAgent(model=ScriptedModel(), input_guardrails=[lambda q: None])\n"
        "except ImportError as exc:\n"
        "    print(exc.code, exc.details['install'], exc.message, sep='|')\n"
    )
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.strip().splitlines()
    assert first == "hi"
    code, install, message = second.split("|")
    assert code == "LA-MISSING-EXTRA"
    assert install == "pip install 'lightagent-core[guardrails]'"
    assert "input_guardrails=" in message and "lightagent-guardrails" in message
