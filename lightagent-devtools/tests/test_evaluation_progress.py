"""LightEvaluator's progress line: drawn on stderr when asked, silent off a terminal."""

from __future__ import annotations

from lightagent import EvaluationCase, LightEvaluator


def test_evaluator_progress_counts_cases(capsys) -> None:
    cases = [
        EvaluationCase(name=f"c{i}", query="x", expected_output_contains="X") for i in range(3)
    ]
    report = LightEvaluator(progress=True).run(lambda q: "X" if q else "", cases)
    assert report.passed == 3
    err = capsys.readouterr().err
    assert "evaluate" in err and "3/3" in err and "3 passed, 0 failed" in err
    LightEvaluator().run(str.upper, cases)  # default: stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
