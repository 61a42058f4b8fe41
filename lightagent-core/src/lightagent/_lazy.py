"""Lazy package exports: each public name is imported from its module on first access."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import cast

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str], namespace: dict[str, object]) -> tuple:
    """Module-level ``__getattr__`` and ``__dir__`` serving ``exports`` (name -> module).

    Use as ``__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())``; a
    loaded name is cached in ``namespace`` so the lookup happens once.
    """

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return list(cast("Iterable[str]", namespace.get("__all__", exports)))

    return __getattr__, __dir__
