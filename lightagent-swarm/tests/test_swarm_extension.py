"""The swarm reaches ``LightAgent`` through its extension: ``run(light_swarm=...)``, the
``LightSwarm`` export, and a typed error naming the extra when it is not installed."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from lightagent import LightAgent, RunOptions, ScriptedModel
from lightagent.errors import ConfigurationError
from lightagent_swarm import LightSwarm, SwarmExtension
from swarm_kit import Recorder, transfer


def _pair() -> tuple[LightAgent, LightAgent, LightSwarm]:
    front = LightAgent(name="front", model=Recorder(transfer("back")).model)
    back = LightAgent(name="back", model=Recorder("from back").model)
    swarm = LightSwarm()
    swarm.register_agent(front, back)
    return front, back, swarm


def test_the_export_and_the_extension_are_the_swarms() -> None:
    import lightagent
    from lightagent.extensions import agent_extensions

    assert lightagent.LightSwarm is LightSwarm
    extension = agent_extensions()["swarm"]
    assert isinstance(extension, SwarmExtension)
    assert dict(extension.run_options) == {"light_swarm": None}
    assert "light_swarm" not in RunOptions.__dataclass_fields__  # the kernel has no such field


def test_light_swarm_runs_the_chain_in_every_mode() -> None:
    front, _, swarm = _pair()
    assert front.run("q", light_swarm=swarm) == "from back"
    front, _, swarm = _pair()
    result = asyncio.run(front.arun("q", light_swarm=swarm, result_format="object"))
    assert result.content == "from back"
    assert [h["target_agent"] for h in result.handoffs] == ["back"]
    front, _, swarm = _pair()
    options = RunOptions.of(None, {"light_swarm": swarm})
    assert front.run("q", options=options) == "from back"

    async def streamed() -> list:
        front, _, swarm = _pair()
        return [e async for e in front.astream("q", light_swarm=swarm, result_format="event")]

    events = asyncio.run(streamed())
    assert events[-1].type == "done" and events[-1].data["content"] == "from back"


def test_light_swarm_none_is_an_ordinary_run_and_a_bad_value_is_refused() -> None:
    agent = LightAgent(model=ScriptedModel(["alone"]))
    assert agent.run("q", light_swarm=None) == "alone"
    with pytest.raises(ConfigurationError) as err:
        agent.run("q", light_swarm=object())
    assert err.value.code == "LA-CONFIG" and "LightSwarm" in err.value.message


def test_a_hop_carries_the_swarms_step_and_its_arrival() -> None:
    front, _, swarm = _pair()
    result = swarm.run(front, "q", result_format="object", trace=True)
    starts = [e for e in result.trace if e["type"] == "run_start"]
    assert [s["data"].get("handoff", {}).get("source_agent") for s in starts] == [None, "front"]


def test_without_the_distribution_the_option_and_the_export_name_the_extra() -> None:
    code = (
        "import sys; sys.modules['lightagent_swarm'] = None\n"
        "from lightagent import LightAgent, ScriptedModel\n"
        "agent = LightAgent(model=ScriptedModel(['hi']))\n"
        "print(agent.run('q', light_swarm=None))\n"
        "try:\n"
        "    agent.run('q', light_swarm=object())\n"
        "except ImportError as exc:\n"
        "    print(exc.code, exc.details['install'], sep='|')\n"
        "try:\n"
        "    from lightagent import LightSwarm\n"
        "except ImportError as exc:\n"
        "    print(exc.code, exc.details['install'], sep='|')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "hi"
    assert lines[1:] == ["LA-MISSING-EXTRA|pip install 'lightagent-core[swarm]'"] * 2
