"""LightDAG next to PyPI ``lightagent==0.11.0``'s LightDAG on the same work, in one process.

Both run the seeds' API unchanged (``LightDAG``, ``register_worker``, ``CallableVerifier``,
``create_run``, ``run``) on an embedded SQLite file: N independent tasks whose worker
sleeps ``work_ms`` (an I/O-bound step, like a model call) and returns its answer, each
verified and published. Throughput is tasks per second at ``max_concurrency`` 1, 2, 4
and 8. The 0.11.0 LightDAG runs in ``bench/.work/venv-la011`` (installed on
first run by ``bench/la011.py``). Multi-process workers on PostgreSQL are measured by
``bench_dag.py``; 0.11.0 has no multi-process mode.

Run: ``.venv/bin/python bench/bench_dag_peer.py [tasks] [work_ms]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from la011 import la011_python

HERE = Path(__file__).resolve().parent
# Each figure is the best of this many runs, for both implementations alike (a 10-task run
# lasts ~50 ms: one sample is mostly noise on a shared machine).
REPEAT = int(os.environ.get("BENCH_DAG_PEER_REPEAT", "3"))

CHILD = r"""
import asyncio, json, sys, tempfile, time
from pathlib import Path
impl, tasks, work_ms, repeat = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
if impl == "ours":
    from lightagent import PermissionSet, SecurityContext
    from lightagent_dag import (CallableVerifier, DAGConfig, LightDAG, LocalArtifactStore,
                                SqliteTaskGraphStore, TaskOutcome, TaskSpec)
    perms = PermissionSet(allowed=frozenset({"dag.task.execute"}))
else:
    from LightAgent import PermissionSet, SecurityContext
    from LightAgent.dag import (CallableVerifier, DAGConfig, LightDAG, LocalArtifactStore,
                                SqliteTaskGraphStore, TaskOutcome, TaskSpec)
    perms = PermissionSet(allowed=frozenset({"dag.task.execute"}))

async def work(context):
    await asyncio.sleep(work_ms / 1000)
    return TaskOutcome.candidate("42")

out = {}
for conc in (1, 2, 4, 8):
  best = None
  for _ in range(repeat):
    with tempfile.TemporaryDirectory() as d:
          root = Path(d)
          store = SqliteTaskGraphStore(root / "dag.sqlite3")
          dag = LightDAG(store=store, artifact_store=LocalArtifactStore(root / "artifacts"),
                         verifiers={"exact": CallableVerifier("exact", lambda r: r.candidate_content == b"42")},
                         config=DAGConfig(max_concurrency=conc, max_tasks=tasks + 10))
          dag.register_worker("w", work)
          specs = [TaskSpec(task_id=f"t{i}", goal="answer", acceptance_contract={"equals": "42"},
                            worker_key="w", verifier_key="exact") for i in range(tasks)]
          ctx = SecurityContext(user_id="bench", tenant_id="bench", project_id="bench", permissions=perms)
          dag.create_run(specs, run_id="bench", context=ctx)
          t = time.perf_counter()
          result = dag.run("bench")
          elapsed = time.perf_counter() - t
          ok = getattr(result, "success", None)
          store.close()
    if best is None or elapsed < best[0]:
        best = (elapsed, bool(ok))
  out[conc] = {"tasks_per_s": tasks / best[0], "success": best[1]}
print(json.dumps(out))
"""


def _run(python: str, impl: str, tasks: int, work_ms: float) -> dict | str:
    proc = subprocess.run(
        [python, "-c", CHILD, impl, str(tasks), str(work_ms), str(REPEAT)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return f"failed: {tail[0][:160]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    work_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    rows = {"lightagent-dag 0.1.0": _run(sys.executable, "ours", tasks, work_ms)}
    old = la011_python()
    rows["LightAgent 0.11.0 LightDAG"] = (
        _run(old, "old", tasks, work_ms) if old else "not measured: installing 0.11.0 failed"
    )
    lines = [
        "## LightDAG next to LightAgent 0.11.0 (one process, SQLite)\n",
        f"{tasks} independent tasks, each worker awaiting {work_ms:g} ms, verified and published; "
        "tasks per second by `max_concurrency` (`bench/bench_dag_peer.py`). Higher is better; "
        f"the ideal at concurrency c is c x {1000 / work_ms:.0f}/s. Each figure is the best of {REPEAT} runs.\n",
        "| implementation | c=1 | c=2 | c=4 | c=8 |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, res in rows.items():
        if isinstance(res, str):
            lines.append(f"| {label} | {res} | | | |")
            continue
        cells = [
            f"{res[str(c)]['tasks_per_s']:.0f}"
            + ("" if res[str(c)]["success"] else " (run failed)")
            for c in (1, 2, 4, 8)
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "dag_peer.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
