"""Tree of Thought for lightagent: plan and reflect over the run's real tools before the first model request.

``LightAgent(tree_of_thought=True)`` (or a :class:`TreeOfThought`) plans every run with a
query before its first model request; ``agent.run_thought(query)`` only plans
(docs/tree-of-thought.md).
"""

from __future__ import annotations

from lightagent_thought.extension import ThoughtExtension
from lightagent_thought.thought import Thought, ThoughtRequest, ThoughtStep, TreeOfThought

__version__ = "0.1.0"
__all__ = [
    "Thought",
    "ThoughtExtension",
    "ThoughtRequest",
    "ThoughtStep",
    "TreeOfThought",
    "__version__",
]
