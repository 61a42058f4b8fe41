"""``ToolsetStack``: toolset routers layered for one run (the agent's, then per-run ones).

The agent's own :class:`~lightagent.toolsets.router.ToolsetRouter` is the first layer; a
run may add more — a swarm's transfer tools, the agent's skills when ``use_skills`` is on —
without adding them to the agent. Each layer merges its tools over the registry the layer
below produced, so names, renames and conflicts follow the router's rules, and each
layer's cache keeps the merged registry stable between model requests.
"""

from __future__ import annotations

from typing import Any

from lightagent.deciders import Call, Decider, adecide, decide
from lightagent.toolsets.router import ToolsetView

__all__ = ["ToolsetStack"]


class ToolsetStack:
    """Routers applied in order; offers the router's ``view``/``aview`` to the loop."""

    __slots__ = ("layers",)

    def __init__(self, *layers: Any) -> None:
        self.layers = tuple(layer for layer in layers if layer is not None)

    def __len__(self) -> int:
        return sum(len(layer) for layer in self.layers)

    def view(self, base: Any) -> ToolsetView:
        """The merged registry over ``base`` (sync)."""
        return decide(self._view(base))

    async def aview(self, base: Any) -> ToolsetView:
        """Async :meth:`view`."""
        return await adecide(self._view(base))

    def _view(self, base: Any) -> Decider[ToolsetView]:
        """Each layer's view over the registry the layer below produced, combined."""
        views = []
        registry = base
        for layer in self.layers:
            view = yield Call(layer.view, (registry,), afn=layer.aview)
            views.append(view)
            registry = view.registry
        return _combined(registry, views)


def _combined(registry: Any, views: list[ToolsetView]) -> ToolsetView:
    if len(views) == 1:
        return views[0]
    out = ToolsetView(registry)
    for view in views:
        out.conflicts.extend(view.conflicts)
        out.hashes.update(view.hashes)
        out.errors.extend(view.errors)
        out.skipped.extend(view.skipped)
    return out
