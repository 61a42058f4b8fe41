"""Adaptive tool selection for lightagent: a local BM25 ranker over the agent's tools.

Installed, it is the tool selector of every agent with ``filter_tools=True`` (the default):
a run with more than 16 tools offers each model request the tools that match it, and
``ToolRegistry.select``, ``offer`` and ``selection_report`` work (docs/tools.md).
"""

from __future__ import annotations

from lightagent_selection.index import OFFER_ALL_UP_TO, ToolIndex, query_terms, tokenize
from lightagent_selection.selector import (
    SELECTOR,
    BM25Selector,
    estimate_tokens,
    schema_tokens,
    selection_report,
)

__version__ = "0.1.0"
__all__ = [
    "OFFER_ALL_UP_TO",
    "SELECTOR",
    "BM25Selector",
    "ToolIndex",
    "__version__",
    "estimate_tokens",
    "query_terms",
    "schema_tokens",
    "selection_report",
    "tokenize",
]
