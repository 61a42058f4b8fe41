"""Checks of tools given inline in a manifest (``ConnectorManifest(tools=[fn, ...])``).

The tool is never called: its module's source file is read and scanned with :mod:`ast`,
as a packaged plugin's sources are. What only warns in a plugin (it may need to start a
process) is an error here: an inline tool reaches an agent without the sandboxed import
and review a plugin distribution gets.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from lightagent_contracts.connectors.findings import Finding
from lightagent_contracts.connectors.static import scan_sources

__all__ = ["check_inline_tools"]

# Scanner codes that refuse an inline tool: code evaluation, processes, the shell,
# unpickling, native calls and dynamic imports (LAV080-LAV085).
_UNSAFE = frozenset(f"LAV08{i}" for i in range(6))


def _source_file(obj: Any) -> Path | None:
    target = getattr(obj, "func", obj)  # a @tool Tool (or a functools.partial) wraps a function
    target = inspect.unwrap(target) if inspect.isfunction(target) else target
    if not (inspect.isfunction(target) or inspect.ismethod(target) or inspect.isclass(target)):
        target = type(target)  # a callable object: the class that holds its code
    try:
        file = inspect.getsourcefile(target)
    except TypeError:  # built in: there is no source
        return None
    return Path(file) if file and Path(file).is_file() else None


def check_inline_tools(
    components: tuple[tuple[str, str, Any], ...], base: Path | None
) -> list[Finding]:
    """LAV053 for each unsafe call or import in an inline tool's module, LAV054 for a tool
    whose source cannot be read; findings of the scan that are not about safety pass as they are."""
    out: list[Finding] = []
    by_file: dict[Path, list[str]] = {}
    for field, name, obj in components:
        if field != "tools":
            continue
        file = _source_file(obj)
        if file is None:
            out.append(
                Finding.make(
                    "LAV054", f"inline tool {name!r}: no source file to check", "ConnectorManifest"
                )
            )
        else:
            by_file.setdefault(file.resolve(), []).append(name)
    root = base.resolve() if base is not None else None
    for file, names in by_file.items():
        tools = ", ".join(repr(n) for n in dict.fromkeys(names))
        for finding in scan_sources([file], root):
            if finding.code in _UNSAFE:
                out.append(
                    Finding.make(
                        "LAV053",
                        f"inline tool {tools}: its module {finding.message} ({finding.code})",
                        finding.location,
                    )
                )
            else:
                out.append(finding)
    return out
