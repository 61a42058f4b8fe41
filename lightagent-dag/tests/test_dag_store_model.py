"""A Hypothesis state machine drives the real SQLite store against a small model.

Workers claim (with a lease that is either long or already expired, to force
takeovers), renew, stage, publish, reject, block, and the operator resolves blockers —
in any order, with stale claims kept around. Every write by a claim whose fence is not
the task's current one must be refused; every other write must land; the model and the
store must agree after each step; never more than one publication per task.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from lightagent import PermissionSet, SecurityContext
from lightagent_dag import (
    DAGConfig,
    DAGFencedError,
    LocalArtifactStore,
    SqliteTaskGraphStore,
    TaskSpec,
)

TASKS = ("a",)
CLAIMABLE = {"ready", "retry_wait"}


class StoreModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp())
        self.store = SqliteTaskGraphStore(self.dir / "dag.sqlite3")
        self.artifacts = LocalArtifactStore(self.dir / "art")
        ctx = SecurityContext(tenant_id="t", project_id="p", permissions=PermissionSet())
        self.store.create_run(
            "r",
            [
                TaskSpec(
                    task_id=t, goal=t, acceptance_contract={}, worker_key="w", verifier_key="v"
                )
                for t in TASKS
            ],
            tenant_id="t",
            project_id="p",
            user_id="u",
            context=ctx.to_dict(),
            root_task_ids=list(TASKS),
            config=DAGConfig(max_attempts_per_task=10_000),
        )
        self.status = dict.fromkeys(TASKS, "ready")
        self.fence = dict.fromkeys(TASKS, 0)
        self.expired = dict.fromkeys(TASKS, False)  # the holder's lease has run out
        self.claims: list = []
        self.staged: dict[str, object] = {}  # attempt id -> manifest
        self.refused = 0

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _expected_claim(self) -> str | None:
        for task in TASKS:  # same priority: insertion order
            if self.status[task] in CLAIMABLE:
                return task
            if self.status[task] in ("running", "verifying") and self.expired[task]:
                return task
        return None

    def _current(self, claim) -> bool:
        return self.fence[claim.task_id] == claim.fence

    @rule(expired=st.booleans())
    def claim(self, expired: bool) -> None:
        expected = self._expected_claim()
        claim = self.store.claim("w", run_id="r", lease_seconds=0.0 if expired else 60.0)
        if expected is None:
            assert claim is None
            return
        assert claim is not None and claim.task_id == expected
        self.fence[expected] += 1
        assert claim.fence == self.fence[expected]
        self.status[expected] = "running"
        self.expired[expected] = expired
        self.claims.append(claim)

    def _write(self, claim, allowed: bool, fn) -> bool:
        if allowed:
            fn()
            return True
        try:
            fn()
        except DAGFencedError:
            self.refused += 1
            return False
        raise AssertionError(f"a stale write by fence {claim.fence} of {claim.task_id} landed")

    @precondition(lambda self: self.claims)
    @rule(data=st.data())
    def renew(self, data) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        ok = self._current(claim) and self.status[claim.task_id] in ("running", "verifying")
        # A renewal after the attempt's own end is not a takeover: only a newer fence refuses it.
        if self._current(claim) and not ok:
            self.store.renew(claim, 60)
            return
        if self._write(claim, ok, lambda: self.store.renew(claim, 60)):
            self.expired[claim.task_id] = False

    @precondition(lambda self: self.claims)
    @rule(data=st.data())
    def stage(self, data) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        manifest = self.artifacts.stage(
            claim.task_id.encode(),
            run_id="r",
            task_id=claim.task_id,
            attempt_id=claim.attempt_id,
            tenant_id="t",
            project_id="p",
        )
        ok = self._current(claim) and self.status[claim.task_id] == "running"
        if self._write(
            claim, ok, lambda: self.store.stage_candidate(claim, manifest, max_pending=100)
        ):
            self.status[claim.task_id] = "verifying"
            self.staged[claim.attempt_id] = manifest

    @precondition(lambda self: self.staged)
    @rule(data=st.data())
    def publish(self, data) -> None:
        claim = data.draw(st.sampled_from([c for c in self.claims if c.attempt_id in self.staged]))
        manifest = self.staged[claim.attempt_id]
        ok = self._current(claim) and self.status[claim.task_id] == "verifying"
        report = {"report_id": f"r-{claim.attempt_id}", "verdict": "pass"}
        if self._write(claim, ok, lambda: self.store.publish(claim, manifest, report)):
            self.status[claim.task_id] = "verified"

    @precondition(lambda self: self.claims)
    @rule(data=st.data(), block=st.booleans())
    def reject(self, data, block: bool) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        ok = self._current(claim) and self.status[claim.task_id] in ("running", "verifying")
        if block:
            write = lambda: self.store.block(claim, "stuck")  # noqa: E731
        else:
            write = lambda: self.store.reject(claim, {"code": "x"}, outcome="retry", backoff=0.0)  # noqa: E731
        if self._write(claim, ok, write):
            self.status[claim.task_id] = "blocked" if block else "retry_wait"

    @precondition(lambda self: "blocked" in self.status.values())
    @rule()
    def resolve(self) -> None:
        task = next(t for t in TASKS if self.status[t] == "blocked")
        self.store.resolve_blocker("r", task, "ok")
        self.status[task] = "ready"

    @invariant()
    def store_matches_model(self) -> None:
        tasks = {t.task_id: t for t in self.store.list_tasks("r")}
        for task in TASKS:
            assert tasks[task].status.value == self.status[task], (
                task,
                tasks[task].status,
                self.status[task],
            )
            assert tasks[task].fence == self.fence[task]
        counts = self.store.publication_counts("r")
        assert all(n == 1 for n in counts.values())
        assert set(counts) == {t for t in TASKS if self.status[t] == "verified"}
        if all(s == "verified" for s in self.status.values()):
            assert self.store.get_run("r").status.value == "succeeded"


# The default run is short; the slow run (``make test-slow``) explores much further. A
# mutation check (dropping the fence from publish's two statements) is caught by both.
StoreModel.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_store_against_the_model = StoreModel.TestCase


class StoreModelLong(StoreModel):
    pass


StoreModelLong.TestCase.settings = settings(
    max_examples=400,
    stateful_step_count=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_store_against_the_model_long = pytest.mark.slow(StoreModelLong.TestCase)
