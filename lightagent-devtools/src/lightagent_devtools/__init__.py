"""Evaluation (LightEvaluator) and the offline trace page for lightagent.

:class:`LightEvaluator` scores live agents, LightFlow runs and recorded sessions against
:class:`EvaluationCase` expectations (docs/evaluation.md); :func:`render_trace_page` turns
a trace into one self-contained HTML timeline, which ``lightagent trace view`` writes
(docs/tracing.md); :class:`TraceRecorder` is the seeds' recorder for traces made by hand.
"""

from __future__ import annotations

from lightagent_devtools.evaluation import (
    EvaluationCase,
    EvaluationCaseResult,
    EvaluationReport,
    LightEvaluator,
)
from lightagent_devtools.trace_page import render_trace_page
from lightagent_devtools.trace_recorder import TraceRecorder

__version__ = "0.1.0"
__all__ = [
    "EvaluationCase",
    "EvaluationCaseResult",
    "EvaluationReport",
    "LightEvaluator",
    "TraceRecorder",
    "__version__",
    "render_trace_page",
]
