"""The tool generator: model-written tools, quarantined, scanned and reviewed before they run."""

from __future__ import annotations

from lightagent.lazy import lazy_exports

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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
