"""Graph and run changes: accepted decompositions, blockers, supersede, pause/resume/cancel, scheduler lease."""

from __future__ import annotations

from typing import Any

from lightagent_dag.errors import DAGError, DAGLimitError
from lightagent_dag.graph import check_graph
from lightagent_dag.records import Claim, DAGRun
from lightagent_dag.specs import TaskSpec
from lightagent_dag.sql.common import (
    Conn,
    Store,
    announce_ready,
    check_limits,
    event,
    fence_check,
    insert_tasks,
    lock_run,
    refresh_run,
    run_graph,
    save_report,
)
from lightagent_dag.sql.rows import dumps


def decompose(
    store: Store, conn: Conn, claim: Claim, proposal: Any, report: dict[str, Any]
) -> DAGRun:
    """Accept a verified decomposition (fenced, CAS on the graph revision, every limit checked)."""
    run = lock_run(store, conn, claim.run_id)
    if (
        proposal.expected_graph_revision is not None
        and proposal.expected_graph_revision != run.graph_revision
    ):
        raise DAGError(
            "LA-DAG-VERSION-CONFLICT",
            f"graph is at revision {run.graph_revision}, proposal expected {proposal.expected_graph_revision}",
        )
    tasks, edges = run_graph(store, conn, claim.run_id)
    parent = tasks.get(claim.task_id)
    fence_check(
        int(
            parent is not None and parent["fence"] == claim.fence and parent["status"] == "running"
        ),
        claim,
        "decompose",
    )
    assert parent is not None
    cfg = run.config
    if parent["decompositions"] >= int(cfg["max_decompositions_per_task"]):
        raise DAGLimitError(
            "max_decompositions_per_task",
            parent["decompositions"] + 1,
            cfg["max_decompositions_per_task"],
        )
    depth = int(parent["depth"]) + 1
    if depth > int(cfg["max_decomposition_depth"]):
        raise DAGLimitError("max_decomposition_depth", depth, cfg["max_decomposition_depth"])
    new_ids = [t.task_id for t in proposal.new_tasks]
    clash = [t for t in new_ids if t in tasks] or [t for t in new_ids if new_ids.count(t) > 1]
    if clash:
        raise DAGError(
            "LA-DAG-INVALID", f"decomposition reuses existing task ids as new: {sorted(set(clash))}"
        )
    for reused in proposal.reuse_task_ids:
        if reused not in tasks:
            raise DAGError(
                "LA-DAG-UNKNOWN-DEPENDENCY", f"decomposition reuses unknown task {reused!r}"
            )
    children = [*new_ids, *proposal.reuse_task_ids]
    graph = {k: list(v) for k, v in edges.items()}
    for spec in proposal.new_tasks:
        graph[spec.task_id] = list(spec.depends_on)
    graph[claim.task_id] = list(dict.fromkeys([*graph.get(claim.task_id, []), *children]))
    added_edges = sum(len(s.depends_on) for s in proposal.new_tasks) + len(
        set(children) - set(edges.get(claim.task_id, []))
    )
    check_limits(run, len(tasks) + len(new_ids), sum(len(v) for v in edges.values()) + added_edges)
    check_graph(graph)
    verified = {t for t, m in tasks.items() if m["status"] == "verified"}
    specs = [
        TaskSpec.from_dict({**s.to_dict(), "created_by_task_id": claim.task_id})
        for s in proposal.new_tasks
    ]
    first_seq = max((int(m["seq"]) for m in tasks.values()), default=0) + 1
    insert_tasks(
        store, conn, claim.run_id, specs, depth=depth, first_seq=first_seq, verified=verified
    )
    for child in children:
        if child not in edges.get(claim.task_id, []):
            conn.execute(
                store.q(
                    "INSERT INTO dag_dependencies(run_id, task_id, depends_on) VALUES (:r, :t, :d)"
                ),
                {"r": claim.run_id, "t": claim.task_id, "d": child},
            )
    all_done = all(c in verified for c in children)
    # The accepted proposal was a successful attempt: the integration phase starts with fresh attempts.
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status=:s, phase='integrate', decompositions=decompositions+1, attempts=0, lease_owner=NULL,"
            " lease_expires_at=NULL WHERE run_id=:r AND task_id=:t AND fence=:f AND status='running'"
        ),
        {
            "s": "ready" if all_done else "waiting_dependencies",
            "r": claim.run_id,
            "t": claim.task_id,
            "f": claim.fence,
        },
    ).rowcount
    fence_check(n, claim, "decompose")
    conn.execute(
        store.q(
            "UPDATE dag_runs SET graph_revision=graph_revision+1, task_count=:n, updated_at={now} WHERE run_id=:r"
        ),
        {"r": claim.run_id, "n": len(tasks) + len(new_ids)},
    )
    conn.execute(
        store.q(
            "UPDATE dag_attempts SET status='succeeded', finished_at={now} WHERE attempt_id=:a"
        ),
        {"a": claim.attempt_id},
    )
    save_report(store, conn, claim, report)
    event(
        store,
        conn,
        claim.run_id,
        "dag.decomposition.accepted",
        {
            "proposal_id": proposal.proposal_id,
            "new_tasks": new_ids,
            "reused": list(proposal.reuse_task_ids),
            "graph_revision": run.graph_revision + 1,
        },
        claim.task_id,
    )
    return lock_run(store, conn, claim.run_id)


def resolve_blocker(
    store: Store, conn: Conn, run_id: str, task_id: str, reason: str | None
) -> None:
    """blocked -> ready (with fresh attempts); the run goes back to running."""
    run = lock_run(store, conn, run_id)
    if run.status.value in ("succeeded", "failed", "cancelled"):
        raise DAGError("LA-DAG-STATE", f"run {run_id!r} is {run.status.value}")
    n = conn.execute(
        store.q(
            "UPDATE dag_tasks SET status='ready', blocker=NULL, attempts=0 WHERE run_id=:r AND task_id=:t AND status='blocked'"
        ),
        {"r": run_id, "t": task_id},
    ).rowcount
    if n != 1:
        raise DAGError("LA-DAG-STATE", f"task {task_id!r} of run {run_id!r} is not blocked")
    event(store, conn, run_id, "dag.task.unblocked", {"reason": reason}, task_id)
    announce_ready(store, conn, run_id)
    if run.status.value == "blocked":
        conn.execute(
            store.q("UPDATE dag_runs SET status='running', updated_at={now} WHERE run_id=:r"),
            {"r": run_id},
        )
        event(store, conn, run_id, "dag.run.resumed", {"reason": reason or "blocker resolved"})


def supersede(
    store: Store,
    conn: Conn,
    run_id: str,
    task_id: str,
    replacement: TaskSpec,
    expected: int,
) -> DAGRun:
    """Replace a task by a new one; CAS on the graph revision; fences out the old task's attempt."""
    run = lock_run(store, conn, run_id)
    if run.graph_revision != expected:
        raise DAGError(
            "LA-DAG-VERSION-CONFLICT",
            f"graph is at revision {run.graph_revision}, expected {expected}",
        )
    if run.status.value in ("succeeded", "cancelled"):
        raise DAGError("LA-DAG-STATE", f"run {run_id!r} is {run.status.value}")
    tasks, edges = run_graph(store, conn, run_id)
    old = tasks.get(task_id)
    if old is None:
        raise DAGError("LA-DAG-NOT-FOUND", f"no task {task_id!r} in run {run_id!r}")
    if old["status"] in ("verified", "superseded"):
        raise DAGError(
            "LA-DAG-STATE", f"task {task_id!r} is {old['status']} and cannot be superseded"
        )
    if replacement.task_id in tasks:
        raise DAGError(
            "LA-DAG-INVALID", f"replacement task id {replacement.task_id!r} already exists"
        )
    graph = {
        k: [replacement.task_id if d == task_id else d for d in v]
        for k, v in edges.items()
        if k != task_id
    }
    graph[replacement.task_id] = list(replacement.depends_on)
    if task_id in replacement.depends_on:
        raise DAGError("LA-DAG-CYCLE", "a replacement cannot depend on the task it supersedes")
    check_graph({**graph, **{t: [] for t in tasks if t not in graph and t != task_id}})
    check_limits(run, len(tasks) + 1, sum(len(v) for v in graph.values()))
    verified = {t for t, m in tasks.items() if m["status"] == "verified"}
    spec = TaskSpec.from_dict({**replacement.to_dict(), "supersedes_task_id": task_id})
    first_seq = max(int(m["seq"]) for m in tasks.values()) + 1
    insert_tasks(
        store, conn, run_id, [spec], depth=int(old["depth"]), first_seq=first_seq, verified=verified
    )
    conn.execute(
        store.q(
            "UPDATE dag_tasks SET status='superseded', fence=fence+1, lease_owner=NULL, lease_expires_at=NULL"
            " WHERE run_id=:r AND task_id=:t"
        ),
        {"r": run_id, "t": task_id},
    )
    conn.execute(
        store.q(
            "UPDATE dag_attempts SET status='cancelled', finished_at={now} WHERE run_id=:r AND task_id=:t AND status IN ('claimed','running','submitted')"
        ),
        {"r": run_id, "t": task_id},
    )
    conn.execute(
        store.q("UPDATE dag_dependencies SET depends_on=:new WHERE run_id=:r AND depends_on=:old"),
        {"r": run_id, "old": task_id, "new": spec.task_id},
    )
    roots = [spec.task_id if t == task_id else t for t in run.root_task_ids]
    conn.execute(
        store.q(
            "UPDATE dag_runs SET graph_revision=graph_revision+1, root_task_ids=:roots, task_count=task_count+1,"
            " status=CASE WHEN status IN ('blocked','failed') THEN 'running' ELSE status END, updated_at={now} WHERE run_id=:r"
        ),
        {"r": run_id, "roots": dumps(roots)},
    )
    event(
        store,
        conn,
        run_id,
        "dag.task.superseded",
        {"replacement": spec.task_id, "graph_revision": run.graph_revision + 1},
        task_id,
    )
    refresh_run(store, conn, run_id)
    return lock_run(store, conn, run_id)


def set_run_status(
    store: Store, conn: Conn, run_id: str, action: str, reason: str | None
) -> DAGRun:
    """pause / resume / cancel."""
    run = lock_run(store, conn, run_id)
    status = run.status.value
    allowed = {
        "pause": ("running", "blocked"),
        "resume": ("paused", "blocked"),
        "cancel": ("running", "paused", "blocked"),
    }
    if action not in allowed:
        raise DAGError("LA-DAG-INVALID", f"unknown run action {action!r}")
    if status not in allowed[action]:
        if (action, status) in (
            ("pause", "paused"),
            ("resume", "running"),
            ("cancel", "cancelled"),
        ):
            return run  # already there: idempotent
        raise DAGError("LA-DAG-STATE", f"cannot {action} run {run_id!r}: it is {status}")
    new = {"pause": "paused", "resume": "running", "cancel": "cancelled"}[action]
    conn.execute(
        store.q("UPDATE dag_runs SET status=:s, reason=:why, updated_at={now} WHERE run_id=:r"),
        {"s": new, "why": reason, "r": run_id},
    )
    if action == "cancel":
        conn.execute(
            store.q(
                "UPDATE dag_tasks SET status='cancelled', fence=fence+1, lease_owner=NULL, lease_expires_at=NULL WHERE run_id=:r"
                " AND status NOT IN ('verified','failed','cancelled','superseded')"
            ),
            {"r": run_id},
        )
        conn.execute(
            store.q(
                "UPDATE dag_attempts SET status='cancelled', finished_at={now} WHERE run_id=:r AND status IN ('claimed','running','submitted')"
            ),
            {"r": run_id},
        )
    event(
        store,
        conn,
        run_id,
        {"pause": "dag.run.paused", "resume": "dag.run.resumed", "cancel": "dag.run.cancelled"}[
            action
        ],
        {"reason": reason},
    )
    if action == "resume":
        refresh_run(store, conn, run_id)
        announce_ready(store, conn, run_id)
    return lock_run(store, conn, run_id)


def acquire_scheduler(
    store: Store, conn: Conn, run_id: str, owner: str, lease_seconds: float
) -> int:
    """Take the run's scheduler lease; the epoch grows on every acquisition."""
    lock_run(store, conn, run_id)
    row = conn.execute(
        store.q(
            "SELECT owner, epoch, (expires_at IS NULL OR expires_at<{now}) AS free FROM dag_scheduler_leases WHERE run_id=:r"
        ),
        {"r": run_id},
    ).first()
    if row is None:
        conn.execute(
            store.q(
                "INSERT INTO dag_scheduler_leases(run_id, owner, epoch, expires_at) VALUES (:r, :o, 1, {now}+:ttl)"
            ),
            {"r": run_id, "o": owner, "ttl": lease_seconds},
        )
        epoch = 1
    else:
        holder, epoch, free = row
        if not free and holder not in (None, owner):
            raise DAGError(
                "LA-DAG-LEASE-REJECTED",
                f"run {run_id!r} is being scheduled by {holder!r}",
                details={"owner": holder},
            )
        epoch = int(epoch) + 1
        conn.execute(
            store.q(
                "UPDATE dag_scheduler_leases SET owner=:o, epoch=:e, expires_at={now}+:ttl WHERE run_id=:r"
            ),
            {"r": run_id, "o": owner, "e": epoch, "ttl": lease_seconds},
        )
    event(store, conn, run_id, "dag.scheduler.acquired", {"owner": owner, "epoch": epoch})
    return epoch
