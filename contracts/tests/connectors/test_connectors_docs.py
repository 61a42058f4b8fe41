"""Every hook has a heading in docs/plugin-hooks.md; every finding code is documented."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from lightagent import hookspecs
from lightagent_contracts.connectors.findings import FINDING_CODES

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _hooks() -> set[str]:
    marker = f"{hookspecs.PROJECT}_spec"
    return {name for name, func in inspect.getmembers(hookspecs, callable) if hasattr(func, marker)}


def test_every_hook_has_a_heading():
    text = (DOCS / "plugin-hooks.md").read_text(encoding="utf-8")
    headings = {h.strip("` ") for h in re.findall(r"^## +(.+)$", text, flags=re.M)}
    missing = sorted(_hooks() - headings)
    assert not missing, f"docs/plugin-hooks.md has no '## <hook>' heading for: {', '.join(missing)}"
    stale = sorted(h for h in headings if re.fullmatch(r"[a-z_]+", h) and h not in _hooks())
    assert not stale, f"docs/plugin-hooks.md documents hooks that do not exist: {stale}"


def test_every_finding_code_is_documented():
    text = (DOCS / "writing-plugins.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(LAV\d{3})` \| (\w+) \|", text, flags=re.M))
    missing = sorted(set(FINDING_CODES) - set(rows))
    assert not missing, f"docs/writing-plugins.md lacks finding codes: {missing}"
    wrong = {
        code: level for code, level in rows.items() if FINDING_CODES.get(code, ("?",))[0] != level
    }
    assert not wrong, f"docs/writing-plugins.md shows the wrong level for: {wrong}"


def test_docs_use_lightagent_imports_only():
    for page in ("writing-plugins.md", "testing-plugins.md", "plugin-hooks.md"):
        assert "from LightAgent" not in (DOCS / page).read_text(encoding="utf-8")
