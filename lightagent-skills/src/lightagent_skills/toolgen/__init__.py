"""The tool generator: model-written tools, quarantined, scanned and reviewed before they run."""

from __future__ import annotations

from typing import Any

_EXPORTS: dict[str, str] = {
    "ALLOWED_MODULES": "lightagent_skills.toolgen.scan",
    "Finding": "lightagent_skills.toolgen.scan",
    "GeneratedTool": "lightagent_skills.toolgen.quarantine",
    "ScanReport": "lightagent_skills.toolgen.scan",
    "ToolReview": "lightagent_skills.toolgen.quarantine",
    "ToolSignature": "lightagent_skills.toolgen.scan",
    "load_installed": "lightagent_skills.toolgen.quarantine",
    "scan_source": "lightagent_skills.toolgen.scan",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    # Each name is imported from its module on first use.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
