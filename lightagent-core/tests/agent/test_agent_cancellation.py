"""CancellationToken semantics and where the loop checks it."""

from __future__ import annotations

import threading

from lightagent import CancellationToken, LightAgent, ScriptedModel


def test_first_cancel_wins_and_reason_is_kept() -> None:
    token = CancellationToken()
    assert not token.cancelled and token.reason is None
    assert token.cancel("first") is True
    assert token.cancel("second") is False
    assert token.cancelled and token.reason == "first"


def test_child_follows_parent_not_the_other_way() -> None:
    parent = CancellationToken()
    child = parent.child(run_id="r1")
    other = parent.child()
    assert child.run_id == "r1"
    child.cancel("child only")
    assert child.cancelled and not parent.cancelled and not other.cancelled
    parent.cancel("stop all")
    assert other.cancelled and other.reason == "stop all"
    late = parent.child()
    assert late.cancelled and late.reason == "stop all"


def test_wait_returns_when_cancelled_from_another_thread() -> None:
    token = CancellationToken()
    assert token.wait(0.01) is False
    threading.Timer(0.05, token.cancel, args=("timer",)).start()
    assert token.wait(5) is True
    assert token.reason == "timer"


def test_cancel_is_thread_safe_exactly_one_winner() -> None:
    token = CancellationToken()
    wins = []
    barrier = threading.Barrier(8)

    def worker(i: int) -> None:
        barrier.wait()
        if token.cancel(f"t{i}"):
            wins.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and token.reason == f"t{wins[0]}"


def test_pre_cancelled_token_makes_no_model_call() -> None:
    model = ScriptedModel(["never"])
    agent = LightAgent(model=model)
    token = CancellationToken()
    token.cancel("before start")
    result = agent.run("q", cancellation_token=token, result_format="object")
    assert result.error["code"] == "LA-CANCELLED"
    assert model.requests == []
    assert agent.run("q", cancellation_token=token).startswith("[LA-CANCELLED]")
