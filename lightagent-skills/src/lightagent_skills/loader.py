"""``ToolLoader``: tools from a directory of modules, one ``<name>.py`` per tool.

Names are checked against ``[A-Za-z_][A-Za-z0-9_]*`` and the resolved file must stay
inside the directory (no ``..``, no absolute paths, no symlink escapes). Importing a
module runs its code: point the loader only at directories you trust.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from lightagent.errors import ToolError
from lightagent.tools import Tool, as_tool

__all__ = ["ToolLoader"]

_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ToolLoader:
    """Loads tools from ``tools_directory`` (default ``"tools"``, relative to the working dir)."""

    def __init__(self, tools_directory: str | Path = "tools") -> None:
        self.tools_directory = Path(tools_directory)
        self._modules: dict[Path, tuple[float, ModuleType]] = {}
        self._lock = threading.Lock()

    def _path(self, name: Any) -> Path:
        if not isinstance(name, str) or not _MODULE_NAME.fullmatch(name):
            raise ToolError(
                "LA-TOOL-DEFINITION",
                f"tool name {name!r} is not allowed",
                details={"name": repr(name)},
                hint="A tool module name must match [A-Za-z_][A-Za-z0-9_]* (no paths, dots or dashes).",
            )
        directory = self.tools_directory.resolve()
        if not directory.is_dir():
            raise ToolError(
                "LA-TOOL-NOT-FOUND",
                f"tools directory {str(self.tools_directory)!r} does not exist",
                details={"directory": str(self.tools_directory)},
                hint="Create it or pass ToolLoader(tools_directory=...).",
            )
        path = (directory / f"{name}.py").resolve()
        if path.parent != directory:
            raise ToolError(
                "LA-TOOL-DEFINITION",
                f"tool module {name!r} resolves outside {str(directory)!r}",
                details={"name": name, "path": str(path)},
                hint="Tool modules must be regular files inside the tools directory (no symlinks out).",
            )
        if not path.is_file():
            raise ToolError(
                "LA-TOOL-NOT-FOUND",
                f"no tool module {name}.py in {str(self.tools_directory)!r}",
                details={"name": name, "directory": str(directory)},
                hint="Check the name, or list the directory's *.py files.",
            )
        return path

    def _import(self, name: str) -> ModuleType:
        path = self._path(name)
        mtime = path.stat().st_mtime
        with self._lock:
            cached = self._modules.get(path)
            if cached is not None and cached[0] == mtime:
                return cached[1]
            digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:12]
            module_name = f"lightagent_loaded_tools_{digest}.{name}"
            try:
                spec = importlib.util.spec_from_file_location(module_name, path)
                if spec is None or spec.loader is None:
                    raise ImportError(f"cannot create an import spec for {path}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[module_name] = module
                spec.loader.exec_module(module)
            except Exception as exc:
                sys.modules.pop(module_name, None)
                detail = f"{type(exc).__name__}: {exc}"
                if isinstance(exc, SyntaxError):
                    detail = f"SyntaxError: {exc.msg} (line {exc.lineno})"
                raise ToolError(
                    "LA-TOOL-DEFINITION",
                    f"could not import tool module {name}.py: {detail}",
                    details={"name": name, "path": str(path), "exception_type": type(exc).__name__},
                    hint="Fix the module so that `python <path>` imports cleanly.",
                ) from exc
            self._modules[path] = (mtime, module)
            return module

    @staticmethod
    def _module_tools(module: ModuleType) -> list[Tool]:
        found = []
        for value in vars(module).values():
            if isinstance(value, Tool) or (
                callable(value) and isinstance(getattr(value, "tool_info", None), dict)
            ):
                found.append(as_tool(value))
        return list({id(t): t for t in found}.values())

    def _load(self, name: str, *, all_if_missing: bool) -> list[Tool]:
        module = self._import(name)
        value = getattr(module, name, None)
        if value is not None:
            if isinstance(value, Tool) or getattr(value, "tool_info", None) is not None:
                return [as_tool(value)]
            if callable(value):
                return [as_tool(value, infer=True)]
        found = self._module_tools(module)
        if found and (all_if_missing or len(found) == 1):
            return found
        raise ToolError(
            "LA-TOOL-DEFINITION",
            f"{name}.py defines no tool named {name!r}"
            + (f" (it has {len(found)} tools; use load_tools)" if found else ""),
            details={"name": name, "found": [t.name for t in found]},
            hint=f"Define `def {name}(...)` decorated with @tool, or give it a tool_info dict.",
        )

    def load_tool(self, name: str) -> Tool:
        """The tool ``name`` from ``<dir>/<name>.py`` (the same-named function, or its only tool)."""
        return self._load(name, all_if_missing=False)[0]

    def load_tools(self, names: Iterable[str]) -> list[Tool]:
        """Tools from each named module: the same-named function, else every tool in it."""
        if isinstance(names, str):
            names = [names]
        out: list[Tool] = []
        for name in names:
            out.extend(self._load(name, all_if_missing=True))
        return out
