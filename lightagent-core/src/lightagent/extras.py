"""Optional dependencies and distributions of ``lightagent-core``, imported on first use.

One error for all of them: :class:`~lightagent.errors.MissingExtraError` (a
``ConfigurationError`` and an ``ImportError``, code ``LA-MISSING-EXTRA``) naming the
``pip install 'lightagent-core[extra]'`` that brings what is missing, never a bare
``ModuleNotFoundError``.

* ``require("sqlalchemy", "sql", "SqlReviewStore")``: a third-party package an extra
  installs;
* ``import_extra(module, "lightagent-<name>", "<extra>", what)``: a module of another
  lightagent distribution, for code outside the kernel (the kernel itself names no
  plugin: it reaches them through entry points and the registry).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from lightagent.errors import MissingExtraError

__all__ = ["import_extra", "missing_extra", "require"]


def missing_extra(what: str, distribution: str, extra: str) -> MissingExtraError:
    """The ``LA-MISSING-EXTRA`` error for ``what``, which ``distribution`` provides."""
    line = f"pip install 'lightagent-core[{extra}]'"
    return MissingExtraError(
        "LA-MISSING-EXTRA",
        f"{what} is provided by {distribution}, which is not installed",
        hint=f"{line} (or pip install {distribution})",
        details={"distribution": distribution, "extra": extra, "install": line},
    )


def require(module: str, extra: str, needed_by: str) -> ModuleType:
    """``import module``, or ``LA-MISSING-EXTRA`` naming ``lightagent-core[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        install = f"pip install 'lightagent-core[{extra}]'"
        raise MissingExtraError(
            "LA-MISSING-EXTRA",
            f"{needed_by} needs {module}, which is not installed.",
            hint=install,
            details={"module": module, "extra": extra, "install": install},
        ) from exc


def import_extra(module: str, distribution: str, extra: str, what: str | None = None) -> ModuleType:
    """Import ``module`` of ``distribution``; ``LA-MISSING-EXTRA`` when it is not installed.

    Only a missing top-level package (the distribution itself) becomes that error; an
    import error inside an installed distribution propagates as it is.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module.split(".", 1)[0]:
            raise
        raise missing_extra(what or module, distribution, extra) from None
