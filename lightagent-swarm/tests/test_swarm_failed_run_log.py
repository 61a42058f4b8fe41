"""A swarm run whose hop fails returns its error and leaves exactly one WARNING, named for
the failing hop's agent and redacted (``swarm.run``, ``light_swarm=`` and ``arun``)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from lightagent import LightAgent, ModelError, ScriptedModel

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def _failing(**kwargs) -> LightAgent:
    error = ModelError("LA-PROVIDER", f"upstream refused api_key={SECRET}")
    return LightAgent(name="failing", model=ScriptedModel([error]), **kwargs)


def _warnings(caplog) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name.split(".")[0] == "lightagent"
    ]


def _check(caplog, run_id: str | None = None) -> None:
    (record,) = _warnings(caplog)
    text = record.getMessage()
    assert "LA-PROVIDER" in text and "failed" in text and SECRET not in text
    assert record.name == "lightagent.agent.failing"
    if run_id is not None:
        assert run_id in text


@pytest.mark.parametrize("mode", ["swarm.run", "light_swarm=", "arun"])
def test_a_swarm_run_whose_hop_fails_logs_one_warning(caplog, mode) -> None:
    from lightagent import LightSwarm

    caplog.set_level(logging.INFO)
    transfer = {"tool_calls": [{"name": "transfer_to_failing", "arguments": {"reason": "theirs"}}]}
    front = LightAgent(name="front", model=ScriptedModel([transfer]))
    swarm = LightSwarm()
    swarm.register_agent(front, _failing())
    if mode == "swarm.run":
        result = swarm.run(front, "hi", result_format="object")
    elif mode == "light_swarm=":
        result = front.run("hi", light_swarm=swarm, result_format="object")
    else:
        result = asyncio.run(swarm.arun(front, "hi", result_format="object"))
    assert result.error["code"] == "LA-PROVIDER"
    _check(caplog)
