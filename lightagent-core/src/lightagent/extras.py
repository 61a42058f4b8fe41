"""Optional dependencies of ``lightagent-core``, imported on first use.

``require("sqlalchemy", "sql", "SqlReviewStore")`` returns the module, or raises a
:class:`~lightagent.errors.ConfigurationError` with code ``LA-MISSING-EXTRA`` naming the
``pip install`` that brings it, instead of a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from lightagent.errors import ConfigurationError

__all__ = ["require"]


def require(module: str, extra: str, needed_by: str) -> ModuleType:
    """``import module``, or ``LA-MISSING-EXTRA`` naming ``lightagent-core[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        install = f"pip install 'lightagent-core[{extra}]'"
        raise ConfigurationError(
            "LA-MISSING-EXTRA",
            f"{needed_by} needs {module}, which is not installed.",
            hint=install,
            details={"module": module, "extra": extra, "install": install},
        ) from exc
