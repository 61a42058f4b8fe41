"""The seeds' tool-folder methods of an agent: ``agent.tool_loader``, ``load_tools`` and
``loaded_tools``, over :class:`~lightagent_skills.loader.ToolLoader`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lightagent_skills.loader import ToolLoader

__all__ = ["ToolFolderMethods"]


class ToolFolderMethods:
    """Mixed into :class:`~lightagent_skills.part.SkillsPart`; needs ``self.agent``."""

    agent: Any
    _tool_loader: ToolLoader | None = None
    _loaded_tools: list[str] | None = None

    @property
    def tool_loader(self) -> ToolLoader:
        """A ``ToolLoader`` for ``./tools`` (the seeds' default directory), made on first use."""
        if self._tool_loader is None:
            self._tool_loader = ToolLoader("tools")
        return self._tool_loader

    @property
    def loaded_tools(self) -> list[str]:
        """Names of the tools added through :meth:`load_tools`, in load order."""
        return list(self._loaded_tools or ())

    def load_tools(
        self, names_or_callables: Iterable[Any] | Any, tools_directory: str | Path = "tools"
    ) -> list[str]:
        """Add tools to the agent: callables directly, names from ``<tools_directory>/<name>.py``.

        Unlike the seeds, ``tools_directory`` is honoured. Returns the names added.
        """
        if isinstance(names_or_callables, str) or callable(names_or_callables):
            names_or_callables = [names_or_callables]
        loader = ToolLoader(tools_directory)
        added: list[str] = []
        for item in names_or_callables:
            tools = loader.load_tools([item]) if isinstance(item, str) else [item]
            for tool in tools:
                self.agent.tools.register_tool(tool, infer=True)
                name = getattr(tool, "name", None) or getattr(tool, "__name__", str(tool))
                added.append(str(name))
        if self._loaded_tools is None:
            self._loaded_tools = []
        self._loaded_tools.extend(added)
        return added
