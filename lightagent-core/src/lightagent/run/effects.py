"""The effects the loop's state machine yields; a driver performs each and sends back the result."""

from __future__ import annotations

from typing import Any

__all__ = [
    "CallModel",
    "CallPhase",
    "ListTools",
    "LoadHistory",
    "Output",
    "RetrieveMemory",
    "RunTools",
    "Search",
    "SessionCall",
    "StoreMemory",
    "StreamModel",
]


class CallModel:
    """Call ``Model.complete`` / ``acomplete``; the result is a ``ModelResponse``."""

    __slots__ = ("request",)

    def __init__(self, request: Any) -> None:
        self.request = request


class StreamModel:
    """Call ``Model.stream`` / ``astream``: the driver passes every chunk to the consumer
    and sends back the final ``ModelResponse``."""

    __slots__ = ("request",)

    def __init__(self, request: Any) -> None:
        self.request = request


class RunTools:
    """Run tool calls concurrently through the dispatcher; the result is a list of ``ToolOutcome``.

    With ``record_each`` the driver emits a ``tool_finished`` event for each call the
    moment it finishes, so a durable log holds it even if the round never completes.
    """

    __slots__ = ("calls", "idempotency_keys", "record_each")

    def __init__(
        self, calls: list[Any], idempotency_keys: dict[str, str], record_each: bool = False
    ) -> None:
        self.calls = calls
        self.idempotency_keys = idempotency_keys
        self.record_each = record_each


class CallPhase:
    """Ask the interceptor about one phase; the result is a ``PhaseOutcome``."""

    __slots__ = ("payload", "phase")

    def __init__(self, phase: str, payload: dict[str, Any]) -> None:
        self.phase = phase
        self.payload = payload


class SessionCall:
    """Call ``call(store, session_id, run_id)`` on the run's session store
    (``SessionBinding.call``): the sync driver calls it, the async one in a worker thread.

    A run step's way to read or append to its session log in the middle of a run; the
    result is what ``call`` returns.
    """

    __slots__ = ("call", "session_id")

    def __init__(self, session_id: str, call: Any) -> None:
        self.session_id = session_id
        self.call = call


class Output:
    """Hand one item to the stream consumer (streamed runs only); the result is None.

    ``kind`` is the :class:`~lightagent.results.StreamEvent` type the item maps to.
    """

    __slots__ = ("item", "kind")

    def __init__(self, kind: str, item: Any) -> None:
        self.kind = kind
        self.item = item


class LoadHistory:
    """Read the session's history (``SessionBinding.history``); the result is a message list."""

    __slots__ = ("session_id",)

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id


class ListTools:
    """Ask the agent's toolsets for their tools (``ToolsetRouter.view``): the result is a
    ``ToolsetView`` whose registry merges them over ``base`` (cached until a change)."""

    __slots__ = ("base",)

    def __init__(self, base: Any) -> None:
        self.base = base


class RetrieveMemory:
    """``memory.retrieve(query, user_id)`` on a ``MemoryProtocol`` backend (sync or async);
    the result is its raw answer."""

    __slots__ = ("memory", "query", "user_id")

    def __init__(self, query: str, user_id: str, memory: Any) -> None:
        self.query = query
        self.user_id = user_id
        self.memory = memory


class StoreMemory:
    """``memory.store(data, user_id, metadata=...)`` (``metadata`` only if accepted)."""

    __slots__ = ("data", "memory", "metadata", "user_id")

    def __init__(self, data: Any, user_id: str, metadata: dict[str, Any], memory: Any) -> None:
        self.data = data
        self.user_id = user_id
        self.metadata = metadata
        self.memory = memory


class Search:
    """``retrieval.search(query, limit=..., **filters)`` on a retrieval provider (sync or
    async); the raw results."""

    __slots__ = ("filters", "limit", "query", "retrieval")

    def __init__(self, query: str, limit: int, filters: dict[str, Any], retrieval: Any) -> None:
        self.query = query
        self.limit = limit
        self.filters = filters
        self.retrieval = retrieval
