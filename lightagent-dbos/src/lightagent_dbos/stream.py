"""Live output of a durable run to the process that started it (``DBOSAgent.astream``).

The workflow runs in a worker thread; what its streamed model requests produce, and the
items the loop hands to a consumer, are pushed onto the consumer's event loop through a
channel registered under the workflow id. A run recovered by another process has no
channel there: it runs to its end and keeps its result, and nothing is streamed.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

__all__ = ["Channel", "channel_for", "open_channel"]

_channels: dict[str, Channel] = {}
_lock = threading.Lock()


class Channel:
    """Items of one run, from the workflow's thread to the consumer's event loop."""

    def __init__(self, workflow_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self.workflow_id = workflow_id
        self.loop = loop
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def push(self, kind: str, item: Any) -> None:
        """Hand ``(kind, item)`` to the consumer (thread-safe; never blocks)."""
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (kind, item))
        except RuntimeError:  # the consumer's loop is closed: nobody is listening
            pass

    def close(self) -> None:
        """Stop routing this run's items here."""
        with _lock:
            if _channels.get(self.workflow_id) is self:
                del _channels[self.workflow_id]


def open_channel(workflow_id: str) -> Channel:
    """A channel for run ``workflow_id`` to the running event loop."""
    channel = Channel(workflow_id, asyncio.get_running_loop())
    with _lock:
        _channels[workflow_id] = channel
    return channel


def channel_for(workflow_id: str | None) -> Channel | None:
    """The channel of the run, when its consumer is in this process."""
    if workflow_id is None:
        return None
    with _lock:
        return _channels.get(workflow_id)
