"""Lazy package exports: each public name is imported from its module on first access.

The kernel's own names are a table (name -> module). A name another distribution provides
comes from that distribution's ``lightagent.exports`` entry points (``LightSwarm =
"some_package:LightSwarm"``), read once, on the first name the table does not hold. A name
of the seeds that nothing installed provides raises
:class:`~lightagent.errors.MissingExtraError` (``LA-MISSING-EXTRA``, also an
``ImportError``) naming the ``pip install`` line (:mod:`lightagent.vocabulary`).

A distribution serves its own package's names the same way: ``__getattr__, __dir__ =
lazy_exports(__name__, _EXPORTS, globals())``.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Iterable, Mapping
from typing import Any, cast

__all__ = ["EXPORTS_GROUP", "lazy_exports", "plugin_exports", "plugin_name"]

#: The entry-point group through which a distribution exports names from ``lightagent``.
EXPORTS_GROUP = "lightagent.exports"

_plugin_exports: dict[str, Any] | None = None


def plugin_exports() -> dict[str, Any]:
    """Name -> ``EntryPoint`` of every installed ``lightagent.exports`` entry point."""
    global _plugin_exports
    if _plugin_exports is None:
        from lightagent.entry_points import entry_points

        found: dict[str, Any] = {}
        for ep in entry_points(EXPORTS_GROUP):
            found.setdefault(ep.name, ep)
        _plugin_exports = found
    return _plugin_exports


def lazy_exports(
    package: str,
    exports: Mapping[str, str],
    namespace: dict[str, object],
    *,
    plugins: bool | Collection[str] = False,
) -> tuple:
    """Module-level ``__getattr__`` and ``__dir__`` serving ``exports`` (name -> module).

    Use as ``__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())``; a
    loaded name is cached in ``namespace`` so the lookup happens once. With ``plugins``
    (True: the top-level package; else the names a subpackage serves from a plugin) a name
    the table lacks is looked up among the plugins' exports.
    """

    def __getattr__(name: str) -> object:
        where = exports.get(name)
        if where is not None:
            value = getattr(importlib.import_module(where), name)
        elif not plugins or name.startswith("__") or (plugins is not True and name not in plugins):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            value = _from_plugin(package, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return list(cast("Iterable[str]", namespace.get("__all__", exports)))

    return __getattr__, __dir__


def plugin_name(name: str, what: str | None = None) -> Any:
    """The object a distribution exports as ``name``; ``LA-MISSING-EXTRA`` (saying it is
    needed by ``what``) when the distribution of that seeds name is not installed."""
    return _from_plugin("lightagent", name, what)


def _from_plugin(package: str, name: str, what: str | None = None) -> Any:
    ep = plugin_exports().get(name)
    if ep is not None:
        try:
            return ep.load()
        except ModuleNotFoundError as exc:
            if exc.name != ep.module.split(".", 1)[0]:
                raise
            # its metadata outlived the package: as good as not installed
    from lightagent.extras import missing_extra
    from lightagent.vocabulary import EXPORTS, distribution

    extra = EXPORTS.get(name)
    if extra is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    raise missing_extra(what or f"{package}.{name}", distribution(extra), extra)
