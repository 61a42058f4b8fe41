"""N plain ``ScriptedModel`` runs in one process, for counting instructions with callgrind
(not a ``bench_*`` script: ``make bench`` does not run it).

Instruction counts do not depend on the machine's load, so they show a change of a few
hundred instructions per run that wall-clock benches cannot. Run it twice under callgrind
with two run counts and divide the difference by the difference in runs (start-up and
imports cancel out); ``PYTHONPATH=<other tree>/lightagent-core/src`` measures another tree::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/callgrind_runs.py sync 40
    # ... and again with 240: (Ir(240) - Ir(40)) / 200 instructions per run

Modes: ``sync`` (``agent.run``), ``async`` (``await agent.arun``), ``stream`` and
``astream`` (the same, streamed: nine chunks and the final response per run).
"""

from __future__ import annotations

import asyncio
import gc
import sys

from lightagent import LightAgent
from lightagent.models.scripted import ScriptedModel

MODES = ("sync", "async", "stream", "astream")


async def _arun(agent: LightAgent, runs: int, stream: bool) -> None:
    for _ in range(runs):
        if stream:
            async for _chunk in await agent.arun("hi", stream=True):
                pass
        else:
            await agent.arun("hi")


def main(mode: str, runs: int) -> None:
    answer = "AI agents are programs that use a language model. " * 2
    agent = LightAgent(model=ScriptedModel(default=answer, chunk_size=16))
    for _ in range(20):  # warm-up: first-use imports and caches
        agent.run("hi")
        list(agent.run("hi", stream=True))
    gc.collect()
    gc.disable()  # collections at varying points are the main noise between two counts
    if mode == "sync":
        for _ in range(runs):
            agent.run("hi")
    elif mode == "stream":
        for _ in range(runs):
            list(agent.run("hi", stream=True))
    else:
        asyncio.run(_arun(agent, runs, stream=mode == "astream"))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODES:
        sys.exit(f"usage: callgrind_runs.py {{{','.join(MODES)}}} RUNS")
    main(sys.argv[1], int(sys.argv[2]))
