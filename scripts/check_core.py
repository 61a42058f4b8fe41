"""Keep the kernel small and blind to its plugins (run by ``make lint``).

Two checks over ``lightagent-core/src``:

* **size**: the ``.py`` files hold at most :data:`MAX_CORE_LINES` lines (as
  ``find lightagent-core/src -name '*.py' | xargs cat | wc -l`` counts them). Lower the
  ceiling when the kernel shrinks; never raise it to let a capability back in.
* **no plugin names**: no file names the import name of another first-party
  distribution (``lightagent_flow``, ``lightagent_dag`` … as read from the root
  ``pyproject.toml``'s import-linter ``root_packages``, minus ``lightagent``), neither in
  an import nor in a string or comment: the kernel reaches plugins only through entry
  points and the registry. Distribution names with hyphens (``lightagent-flow``) are
  allowed: they are what users install.

``python scripts/check_core.py [ROOT]`` prints what is wrong and exits 1, or exits 0.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

#: The most lines the kernel's ``.py`` files may hold together: a ratchet, lowered with every
#: capability that leaves the core, never raised. The goal is 18,000 (docs/architecture.md,
#: "Figures" says what is left to move).
MAX_CORE_LINES = 20_366

#: The kernel's own import name (the one root package the kernel may name).
KERNEL = "lightagent"

#: (file below lightagent-core/src, name) pairs that are not a plugin's import name but
#: spell the same: each with the reason. Keep this short.
ALLOWED: dict[tuple[str, str], str] = {}


def plugin_packages(root: Path) -> list[str]:
    """The import names of every first-party distribution but the kernel."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    packages = config["tool"]["importlinter"]["root_packages"]
    return sorted(p for p in packages if p != KERNEL)


def core_files(root: Path) -> list[Path]:
    """The kernel's ``.py`` files, in path order."""
    return sorted((root / "lightagent-core" / "src").rglob("*.py"))


def count_lines(files: Iterable[Path]) -> int:
    """Lines as ``wc -l`` counts them: newline characters."""
    return sum(path.read_bytes().count(b"\n") for path in files)


def plugin_mentions(root: Path, packages: Iterable[str]) -> list[str]:
    """``path:line: name`` for every mention of a plugin's import name in the kernel."""
    names = sorted(packages, key=len, reverse=True)
    if not names:
        return []
    # A whole identifier: lightagent_flow or lightagent_flow.x, not lightagent_flowers.
    pattern = re.compile(
        r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_])"
    )
    src = root / "lightagent-core" / "src"
    found: list[str] = []
    for path in core_files(root):
        relative = path.relative_to(src).as_posix()
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            for match in pattern.finditer(line):
                if (relative, match.group(1)) in ALLOWED:
                    continue
                found.append(f"lightagent-core/src/{relative}:{number}: {match.group(1)}")
    return found


def check(root: Path, *, ceiling: int = MAX_CORE_LINES) -> list[str]:
    """Every problem found under ``root`` (a checkout), as one line each."""
    problems: list[str] = []
    lines = count_lines(core_files(root))
    if lines > ceiling:
        problems.append(
            f"lightagent-core/src holds {lines} lines of Python, more than the ceiling of "
            f"{ceiling} (scripts/check_core.py MAX_CORE_LINES): move a capability into its "
            "own distribution instead of growing the kernel"
        )
    for mention in plugin_mentions(root, plugin_packages(root)):
        problems.append(
            f"{mention}: the kernel names a plugin's package; reach it through an entry "
            "point or the registry (a distribution name with hyphens is fine in text)"
        )
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    problems = check(root)
    for problem in problems:
        print(f"check-core: {problem}", file=sys.stderr)
    if not problems:
        print(f"check-core: ok ({count_lines(core_files(root))} of {MAX_CORE_LINES} lines)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
