"""Tree of Thought for lightagent: plan and reflect over the run's real tools before the first model request."""

from __future__ import annotations

__all__: list[str] = []
