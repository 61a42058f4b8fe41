"""Property test: on random DAGs with random failures the scheduler keeps its invariants."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lightagent_flow import LightFlow


@st.composite
def dags(draw: Any) -> tuple[list[list[int]], set[int]]:
    n = draw(st.integers(min_value=1, max_value=9))
    deps = [sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))) if i else [] for i in range(n)]
    failing = draw(st.sets(st.integers(0, n - 1), max_size=3))
    return deps, failing


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(), st.randoms(use_true_random=False))
def test_scheduler_invariants(dag: tuple[list[list[int]], set[int]], rnd: Any) -> None:
    deps, failing = dag
    log: list[tuple[str, str]] = []

    def make(i: int) -> Any:
        async def agent(query: str) -> str:
            log.append(("start", f"s{i}"))
            await asyncio.sleep(rnd.random() * 0.002)
            log.append(("end", f"s{i}"))
            if i in failing:
                raise RuntimeError("planned failure")
            return f"out{i}"

        return agent

    flow = LightFlow()
    for i, d in enumerate(deps):
        flow.step(f"s{i}", agent=make(i), depends_on=[f"s{j}" for j in d])
    result = flow.run("q")

    # Expected outcome: a step succeeds iff it does not fail itself and all its deps succeeded.
    expected: dict[int, str] = {}
    for i, d in enumerate(deps):
        if any(expected[j] != "success" for j in d):
            expected[i] = "skipped"
        else:
            expected[i] = "failed" if i in failing else "success"
    assert {n: s.status for n, s in result.steps.items()} == {
        f"s{i}": v for i, v in expected.items()
    }
    assert result.status == ("failed" if "failed" in expected.values() else "success")

    # Every started step started after all of its dependencies ended; skipped steps never started.
    position = {event: k for k, event in enumerate(log)}
    for i, d in enumerate(deps):
        started = ("start", f"s{i}") in position
        assert started == (expected[i] != "skipped")
        if started:
            for j in d:
                assert position[("end", f"s{j}")] < position[("start", f"s{i}")]
