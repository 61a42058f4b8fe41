"""Run and trace ids: random, distinct, and never handed out twice across a fork."""

from __future__ import annotations

import multiprocessing
import os
import re

import pytest
from lightagent.run.ids import new_id


def test_ids_are_prefixed_96_bit_hex_and_distinct() -> None:
    ids = [new_id("run") for _ in range(500)]
    assert all(re.fullmatch(r"run_[0-9a-f]{24}", i) for i in ids)
    assert len(set(ids)) == len(ids)


def _child(out: object) -> None:
    out.put(new_id("run"))  # type: ignore[attr-defined]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_never_repeats_the_ids_its_parent_hands_out() -> None:
    new_id("run")  # the parent now holds random ids it has not handed out yet
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    proc = ctx.Process(target=_child, args=(out,))
    proc.start()
    proc.join(30)
    assert proc.exitcode == 0
    assert out.get(timeout=5) != new_id("run")
