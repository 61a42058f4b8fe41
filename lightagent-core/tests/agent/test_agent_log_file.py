"""``log_file=``: the run's lines are in the file when ``run()``/``arun()`` return (and when a
stream ends), under pytest's own logging plugin too, and the async wait is off the loop."""

from __future__ import annotations

import asyncio
import threading

from lightagent import LightAgent, ScriptedModel
from lightagent.agent_log import QueuedFileHandler


def _agent(tmp_path, *replies: str) -> tuple[LightAgent, object]:
    log = tmp_path / "agent.log"
    return LightAgent(name="logged", model=ScriptedModel(list(replies)), log_file=str(log)), log


def test_run_returns_with_its_lines_on_disk(tmp_path) -> None:
    agent, log = _agent(tmp_path, "one", "two")
    for expected in (1, 2):
        agent.run("hello")
        text = log.read_text()  # no flush: run() waited for the writer
        assert text.count("run_start") == expected and text.count("run_end") == expected


def test_arun_returns_with_its_lines_on_disk_and_waits_off_the_loop(tmp_path, monkeypatch) -> None:
    waits: list[int] = []
    flush = QueuedFileHandler.flush

    def spying_flush(self: QueuedFileHandler) -> None:
        waits.append(threading.get_ident())
        flush(self)

    monkeypatch.setattr(QueuedFileHandler, "flush", spying_flush)
    agent, log = _agent(tmp_path, "one", "two")

    async def main() -> int:
        await asyncio.gather(agent.arun("first"), agent.arun("second"))
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    text = log.read_text()
    assert text.count("run_start") == 2 and text.count("run_end") == 2
    assert waits and loop_thread not in waits


def test_a_finished_stream_has_its_lines_on_disk(tmp_path) -> None:
    agent, log = _agent(tmp_path, "streamed", "astreamed")
    assert list(agent.run("hello", stream=True))
    assert "run_end" in log.read_text()

    async def consume() -> None:
        async for _ in agent.astream("hello"):
            pass

    asyncio.run(consume())
    assert log.read_text().count("run_end") == 2


def test_flush_waits_only_for_what_was_queued_and_close_still_writes(tmp_path) -> None:
    path = tmp_path / "direct.log"
    handler = QueuedFileHandler(str(path))
    handler.flush()  # nothing queued, no thread: returns at once, no file
    assert not path.exists()
    import logging

    logger = logging.getLogger("lightagent.test.direct-log")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        logger.warning("first line")
        handler.flush()
        assert path.read_text() == "first line\n"
        logger.warning("second line")
    finally:
        logger.removeHandler(handler)
        handler.close()
    assert path.read_text() == "first line\nsecond line\n"
    handler.flush()  # closed: nothing to wait for, never a hang
