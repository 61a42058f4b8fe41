"""``SearchToolset``: a retrieval provider offered to the model as a search tool with citations,
and the search filters a run applies."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from lightagent.errors import LightAgentError, StorageError
from lightagent.retrieval.protocol import names_keyword, search_hits
from lightagent.toolsets.protocol import BaseToolset, ToolCallContext, ToolDefinition

__all__ = ["SearchToolset", "context_filters", "run_search"]


def context_filters(
    filters: Mapping[str, Any] | Callable[[ToolCallContext | None], Any] | None,
    context: ToolCallContext | None,
    provider: Any = None,
) -> dict[str, Any]:
    """The search filters for a call: the given ones, plus the caller's tenant when known,
    and the run's ``owner`` (over any given one) for a provider whose ``search`` names it."""
    if callable(filters):
        out = dict(filters(context) or {})
    else:
        out = dict(filters or {})
    tenant = getattr(context, "tenant_id", None)
    if tenant is not None:
        out.setdefault("tenant_id", tenant)
    owner = getattr(context, "owner", None)
    if owner is not None and provider is not None and names_keyword(provider.search, "owner"):
        out["owner"] = dict(owner)
    return out


async def run_search(provider: Any, query: str, limit: int, filters: dict[str, Any]) -> Any:
    """Call ``provider.search`` from async code: awaited if async, else in a worker thread."""
    search = provider.search
    if inspect.iscoroutinefunction(search):
        return await search(query, limit=limit, **filters)
    result = await asyncio.to_thread(search, query, limit=limit, **filters)
    return await result if inspect.isawaitable(result) else result


class SearchToolset(BaseToolset):
    """One tool, ``search_knowledge(query, limit=5)``, over a retrieval provider.

    Results reach the model as JSON with a ``citation`` per passage (``rag:<chunk_id>`` …),
    and are marked as untrusted output. ``filters`` (a dict, or a callable of the call's
    :class:`ToolCallContext`) narrow every search; the caller's tenant is added when known,
    and the run's owner for a provider whose ``search`` names ``owner``.
    """

    loop_bound = False

    def __init__(
        self,
        provider: Any,
        *,
        name: str = "search_knowledge",
        description: str | None = None,
        limit: int = 5,
        max_limit: int = 20,
        filters: Mapping[str, Any] | Callable[[ToolCallContext | None], Any] | None = None,
        namespace: str = "retrieval",
    ) -> None:
        super().__init__(namespace=namespace)
        if provider is not None and not callable(getattr(provider, "search", None)):
            from lightagent.errors import ConfigurationError

            raise ConfigurationError(
                "LA-CONFIG",
                f"retrieval= needs an object with search(query, *, limit, **filters), got {type(provider).__name__}",
            )
        self._provider = provider
        self.name = name
        self.limit = limit
        self.max_limit = max_limit
        self.filters = filters
        self.description = description or (
            "Search the knowledge base. Returns passages, each with a citation id; "
            "cite the ids you use, e.g. [rag:12]."
        )

    @property
    def provider(self) -> Any:
        """The retrieval provider searched."""
        return self._provider

    def list_tools(self) -> list[ToolDefinition]:
        return [
            ToolDefinition(
                name=self.name,
                description=self.description,
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for."},
                        "limit": {
                            "type": "integer",
                            "description": "How many passages to return.",
                            "minimum": 1,
                            "maximum": self.max_limit,
                            "default": self.limit,
                        },
                    },
                    "required": ["query"],
                    "additionalProperties": False,
                },
                untrusted_output=True,
                metadata={"kind": "retrieval"},
            )
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: ToolCallContext
    ) -> list[dict[str, Any]]:
        query = str(arguments.get("query") or "")
        limit = arguments.get("limit") or self.limit
        limit = max(1, min(int(limit), self.max_limit))
        provider = self.provider
        filters = context_filters(self.filters, context, provider)
        try:
            raw = await run_search(provider, query, limit, filters)
        except LightAgentError:
            raise
        except Exception as exc:
            raise StorageError(
                "LA-RETRIEVAL",
                f"search failed: {type(exc).__name__}: {exc}",
                details={"exception": type(exc).__name__},
            ) from exc
        return [hit.to_dict() for hit in search_hits(raw)[:limit]]
