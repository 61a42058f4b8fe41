"""One entry-point group of the installed distributions, in name order.

The kernel reads three groups besides the plugins' own (``lightagent.exports``,
``lightagent.error_codes``, ``lightagent.hook_phases``), each once and only when a name it
does not hold is asked for: ``importlib.metadata`` is imported here on that first call,
never at ``import lightagent``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["entry_points", "loaded"]


def entry_points(group: str) -> list[Any]:
    """The ``EntryPoint`` objects of ``group``, sorted by name."""
    from importlib.metadata import entry_points as found

    return sorted(found(group=group), key=lambda ep: ep.name)


def loaded(group: str) -> list[Any]:
    """What each entry point of ``group`` names, in name order; one that fails to load is
    left out (a broken plugin never breaks the kernel that reads it)."""
    values = []
    for ep in entry_points(group):
        try:
            values.append(ep.load())
        except Exception:
            continue
    return values
