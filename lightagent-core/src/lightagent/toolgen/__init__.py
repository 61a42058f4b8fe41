"""The tool generator: model-written tools, quarantined, scanned and reviewed before they run."""

from __future__ import annotations

from lightagent._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ALLOWED_MODULES": "lightagent.toolgen.scan",
    "Finding": "lightagent.toolgen.scan",
    "GeneratedTool": "lightagent.toolgen.quarantine",
    "ScanReport": "lightagent.toolgen.scan",
    "ToolReview": "lightagent.toolgen.quarantine",
    "ToolSignature": "lightagent.toolgen.scan",
    "load_installed": "lightagent.toolgen.quarantine",
    "scan_source": "lightagent.toolgen.scan",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
