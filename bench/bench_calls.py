"""Function calls per run of the loop: a load-independent measure of its cost.

Wall-clock figures on a busy machine move by ±10 % from one run to the next; the number
of Python and C function calls a run makes does not. Run it against two source trees to
see whether a change adds work to the hot path (e.g. ``PYTHONPATH=<old>/lightagent-core/src``):
``.venv/bin/python bench/bench_calls.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_agent


def calls_per_run(fn, runs: int = 100) -> dict[str, float]:
    for _ in range(50):
        fn()
    counts = {"call": 0, "c_call": 0}

    def profile(frame, event, arg):
        if event in counts:
            counts[event] += 1

    sys.setprofile(profile)
    try:
        for _ in range(runs):
            fn()
    finally:
        sys.setprofile(None)
    return {kind: count / runs for kind, count in counts.items()}


def main() -> None:
    from lightagent import LightAgent

    model = bench_agent.NullModel()
    plain = LightAgent(model=model)
    inline = LightAgent(model=model, tools=[bench_agent.get_weather], tool_timeout=None)
    pooled = LightAgent(model=model, tools=[bench_agent.get_weather])
    cases = {
        "plain run": lambda: plain.run("hi"),
        "plain stream": lambda: list(plain.run("hi", stream=True)),
        "one tool round, inline": lambda: inline.run("weather"),
        "one tool round, worker thread (calling thread only)": lambda: pooled.run("weather"),
    }
    print(json.dumps({name: calls_per_run(fn) for name, fn in cases.items()}, indent=2))


if __name__ == "__main__":
    main()
