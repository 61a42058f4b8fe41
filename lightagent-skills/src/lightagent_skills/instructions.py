"""Project instructions: the ``AGENTS.md`` files from the project root down to a directory.

The project root is the nearest directory at or above ``start`` holding ``.git`` (or the
``root=`` you pass); without one, only ``start`` itself is read, never its parents. Files
come root first and nearest last, so the most specific instructions are read last. The
total is capped at ``max_chars``: the nearest files are kept whole first, and what does
not fit from the farther ones is cut, with a note saying so. Nothing is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["InstructionFile", "discover_project_instructions", "find_project_instructions"]


@dataclass(frozen=True)
class InstructionFile:
    """One instructions file: where it is (relative to the root), its text, and whether it was cut."""

    path: str
    text: str
    truncated: bool = False
    omitted: bool = False


def project_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.git``."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def _chain(start: Path, root: Path) -> list[Path]:
    if start != root and root not in start.parents:
        return [start]
    dirs = [start]
    while dirs[-1] != root:
        dirs.append(dirs[-1].parent)
    return list(reversed(dirs))


def _read(path: Path, limit: int) -> tuple[str, bool]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        text = handle.read(limit + 1)
    return (text[:limit], True) if len(text) > limit else (text, False)


def find_project_instructions(
    start: str | os.PathLike[str] | None = None,
    *,
    filename: str = "AGENTS.md",
    max_chars: int = 100_000,
    root: str | os.PathLike[str] | None = None,
) -> list[InstructionFile]:
    """Each instructions file from the root down to ``start`` (nearest last), within the cap."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    top = Path(root).resolve() if root is not None else project_root(here)
    dirs = _chain(here, top) if top is not None else [here]
    base = top or here
    found = []
    for directory in dirs:
        candidate = directory / filename
        # a symlink may point anywhere: only a file that stays inside the project is read
        if candidate.is_file() and base in (candidate.resolve().parents):
            found.append(candidate)
    budget = max(0, int(max_chars))
    kept: list[InstructionFile] = []
    for path in reversed(found):  # nearest first: it is kept whole before farther ones
        relative = str(path.relative_to(base))
        if budget <= 0:
            kept.append(InstructionFile(relative, "", truncated=True, omitted=True))
            continue
        text, cut = _read(path, budget)
        budget -= len(text)
        kept.append(InstructionFile(relative, text, truncated=cut))
    return list(reversed(kept))


def discover_project_instructions(
    start: str | os.PathLike[str] | None = None,
    *,
    filename: str = "AGENTS.md",
    max_chars: int = 100_000,
    root: str | os.PathLike[str] | None = None,
) -> str:
    """The project's instructions as one text, root first and nearest last ("" when none).

    Each file is introduced by a ``<!-- path -->`` line; a cut or left-out file says so.
    """
    parts = []
    for item in find_project_instructions(start, filename=filename, max_chars=max_chars, root=root):
        if item.omitted:
            parts.append(f"<!-- {item.path}: left out, over the {max_chars}-character limit -->")
            continue
        body = item.text.strip()
        note = (
            f"\n<!-- {item.path}: cut at the {max_chars}-character limit -->"
            if item.truncated
            else ""
        )
        parts.append(f"<!-- {item.path} -->\n{body}{note}")
    return "\n\n".join(parts)
