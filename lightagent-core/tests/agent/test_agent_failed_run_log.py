"""A failed run still returns its error as the answer (0.11), and leaves exactly one WARNING
on the ``lightagent`` loggers naming the run and the code, redacted; run, arun and streams."""

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


def test_run_returns_the_error_text_and_logs_one_warning(caplog) -> None:
    caplog.set_level(logging.DEBUG)
    answer = _failing().run("hi")
    assert isinstance(answer, str) and "LA-PROVIDER" in answer  # the 0.11 behaviour, kept
    _check(caplog)
    caplog.clear()
    result = _failing().run("hi", result_format="object")
    assert not result.success and result.error["code"] == "LA-PROVIDER"
    _check(caplog, result.run_id)


def test_arun_logs_one_warning(caplog) -> None:
    caplog.set_level(logging.INFO)
    result = asyncio.run(_failing().arun("hi", result_format="object"))
    assert result.error["code"] == "LA-PROVIDER"
    _check(caplog, result.run_id)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_failed_stream_logs_one_warning(caplog, mode) -> None:
    caplog.set_level(logging.INFO)
    agent = _failing()
    if mode == "sync":
        items = list(agent.run("hi", stream=True, result_format="event"))
    else:

        async def consume() -> list:
            return [item async for item in agent.astream("hi", result_format="event")]

        items = asyncio.run(consume())
    assert [i.type for i in items][-2:] == ["error", "done"]
    _check(caplog, items[-1].data["run_id"])


def test_one_warning_with_log_file_and_debug_too(caplog, tmp_path) -> None:
    caplog.set_level(logging.DEBUG)
    log = tmp_path / "failing.log"
    agent = _failing(log_file=str(log), debug=True)
    result = agent.run("hi", result_format="object")
    _check(caplog, result.run_id)
    text = log.read_text()
    assert f"run {result.run_id} failed: [LA-PROVIDER]" in text and SECRET not in text


def test_a_successful_run_logs_no_warning(caplog) -> None:
    caplog.set_level(logging.INFO)
    assert LightAgent(model=ScriptedModel(["fine"])).run("hi") == "fine"
    assert _warnings(caplog) == []
