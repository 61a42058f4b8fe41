"""``LightAgent``'s toolsets and their lifecycle (``with agent:``)."""

from __future__ import annotations

import asyncio
from typing import Any

from lightagent.errors import ConfigurationError

__all__ = ["ToolsetMethods"]


class ToolsetMethods:
    """Mixed into ``LightAgent``: toolsets beside function tools, and opening/closing them.

    Toolsets open on first use (or with ``agent.open()`` / ``async with agent``); closing
    the agent (``close()``, ``aclose()``, leaving ``with``) exits every toolset it opened,
    from any thread or event loop.
    """

    _toolsets: Any
    _lock: Any
    tools: Any

    # -- toolsets --------------------------------------------------------------------
    @property
    def toolsets(self) -> list[Any]:
        """The toolsets added to this agent (its function tools are ``agent.tools``)."""
        router = self._toolsets
        return [owner.toolset for owner in router.owners()] if router is not None else []

    def add_toolset(self, toolset: Any) -> Any:
        """Add a toolset (an object with ``list_tools``/``call_tool``, or a registered name,
        or ``("name", {configuration})``); its tools are offered from the next model request."""
        from lightagent.run.options import resolve_tool
        from lightagent.toolsets.protocol import is_toolset

        resolved = resolve_tool(toolset)
        if not is_toolset(resolved):
            raise ConfigurationError(
                "LA-CONFIG",
                f"add_toolset needs a toolset (list_tools and call_tool), got {type(resolved).__name__}",
                hint="Register single functions with LightAgent(tools=[...]) or agent.tools.register_tool().",
            )
        with self._lock:
            if self._toolsets is None:
                from lightagent.toolsets.router import ToolsetRouter

                self._toolsets = ToolsetRouter()
        self._toolsets.add(resolved)
        return resolved

    def _detach(self, toolset: Any) -> Any:
        owner = self._toolsets.remove(toolset) if self._toolsets is not None else None
        if owner is None:
            raise ConfigurationError(
                "LA-CONFIG",
                f"no such toolset on this agent: {toolset!r}"[:200],
                hint="Pass the toolset object or its namespace.",
            )
        return owner

    def remove_toolset(self, toolset: Any) -> None:
        """Remove a toolset (the object or its namespace) and close it if it was opened."""
        self._detach(toolset).close()

    async def aremove_toolset(self, toolset: Any) -> None:
        """Async :meth:`remove_toolset`."""
        await self._detach(toolset).aclose()

    # -- lifecycle -------------------------------------------------------------------
    def open(self) -> Any:
        """Open every toolset now (they also open on first use); returns the agent."""
        for owner in self._owners():
            owner.open()
        return self

    async def aopen(self) -> Any:
        """Async :meth:`open`: the toolsets open concurrently; every one is tried, and the
        first failure is raised after the others are open."""
        results = await asyncio.gather(
            *(owner.aopen() for owner in self._owners()), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return self

    def close(self) -> None:
        """Close every toolset this agent opened (any thread; the agent stays usable)."""
        errors = []
        for owner in reversed(self._owners()):
            try:
                owner.close()
            except Exception as exc:  # close the others first
                errors.append(exc)
        if errors:
            raise errors[0]

    async def aclose(self) -> None:
        """Async :meth:`close` (any event loop)."""
        errors = []
        for owner in reversed(self._owners()):
            try:
                await owner.aclose()
            except Exception as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def _owners(self) -> list[Any]:
        router = self._toolsets
        return router.owners() if router is not None else []

    def __enter__(self) -> Any:
        return self.open()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    async def __aenter__(self) -> Any:
        return await self.aopen()

    async def __aexit__(self, *exc_info: Any) -> None:
        await asyncio.shield(self.aclose())
