"""Lazy package exports: each public name is imported from its module on first access.

An export is ``"module"`` (the module ships with this distribution) or
``("module", "distribution", "extra")``: the name lives in another distribution, which
``pip install 'lightagent-core[extra]'`` installs. Using such a name without it raises
:class:`~lightagent.errors.MissingExtraError` (``LA-MISSING-EXTRA``, also an
``ImportError``) naming that line, never a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any, cast

__all__ = ["Export", "import_extra", "lazy_exports", "missing_extra"]

#: ``"module"`` or ``("module", "distribution", "extra")``.
Export = str | tuple[str, str, str]


def missing_extra(what: str, distribution: str, extra: str) -> Exception:
    """The ``LA-MISSING-EXTRA`` error for ``what``, which ``distribution`` provides."""
    from lightagent.errors import MissingExtraError

    line = f"pip install 'lightagent-core[{extra}]'"
    return MissingExtraError(
        "LA-MISSING-EXTRA",
        f"{what} is provided by {distribution}, which is not installed",
        hint=f"{line} (or pip install {distribution})",
        details={"distribution": distribution, "extra": extra, "install": line},
    )


def import_extra(module: str, distribution: str, extra: str, what: str | None = None) -> Any:
    """Import ``module`` of ``distribution``; ``LA-MISSING-EXTRA`` when it is not installed.

    Only a missing top-level package (the distribution itself) becomes that error; an
    import error inside an installed distribution propagates as it is.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".", 1)[0]
        if exc.name != top:
            raise
        raise missing_extra(what or module, distribution, extra) from None


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
