"""Lazy package exports: each public name is imported from its module on first access.

An export is ``"module"`` (the module ships with this distribution) or
``("module", "distribution", "extra")``: the name lives in another distribution, which
``pip install 'lightagent-core[extra]'`` installs. Using such a name without it raises
:class:`~lightagent.errors.MissingExtraError` (``LA-MISSING-EXTRA``, also an
``ImportError``) naming that line (:func:`lightagent.extras.import_extra`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import cast

from lightagent.extras import import_extra

__all__ = ["Export", "lazy_exports"]

#: ``"module"`` or ``("module", "distribution", "extra")``.
Export = str | tuple[str, str, str]


def lazy_exports(
    package: str, exports: Mapping[str, Export], namespace: dict[str, object]
) -> tuple:
    """Module-level ``__getattr__`` and ``__dir__`` serving ``exports`` (name -> export).

    Use as ``__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())``; a
    loaded name is cached in ``namespace`` so the lookup happens once.
    """

    def __getattr__(name: str) -> object:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if isinstance(where, str):
            value = getattr(importlib.import_module(where), name)
        else:
            module, distribution, extra = where
            value = getattr(import_extra(module, distribution, extra, f"{package}.{name}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return list(cast("Iterable[str]", namespace.get("__all__", exports)))

    return __getattr__, __dir__
