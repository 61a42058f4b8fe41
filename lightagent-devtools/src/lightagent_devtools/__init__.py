"""Evaluation (LightEvaluator) and the offline trace page for lightagent."""

from __future__ import annotations

__all__: list[str] = []
