"""Docs stay complete: every ``LA-…`` code with its hint in docs/errors.md, every profile in docs/models.md.

The codes are the kernel's (lightagent/error_codes.py) plus those of every installed
distribution (its ``lightagent.error_codes`` entry point): walking ``ERROR_TAXONOMY`` reads both.

Regenerate the code tables after adding codes:
``.venv/bin/python lightagent-core/tests/models/test_models_docs_errors.py --write``
(rewrites only the part of docs/errors.md from ``## Every code`` on).
"""

from __future__ import annotations

import sys
from pathlib import Path

from lightagent.error_codes import CODES, plugin_codes
from lightagent.errors import ERROR_TAXONOMY
from lightagent.models.profiles import PROFILES

DOCS = Path(__file__).resolve().parents[3] / "docs"
MARKER = "## Every code\n"
FAMILIES = [
    "model",
    "tool",
    "validation",
    "policy",
    "budget",
    "storage",
    "plugin",
    "flow",
    "dag",
    "unknown",
]


def render_tables() -> str:
    """The ``## Every code`` section: one table per family, in taxonomy order."""
    families: dict[str, list] = {}
    for info in ERROR_TAXONOMY.values():
        families.setdefault(info.family, []).append(info)
    order = FAMILIES + sorted(f for f in families if f not in FAMILIES)
    out = [MARKER]
    for family in (f for f in order if f in families):
        out.append(f"\n### {family}\n\n| code | meaning | hint |\n|---|---|---|\n")
        for info in families[family]:
            cells = [
                f"`{info.code}`",
                info.message.replace("|", "\\|"),
                info.hint.replace("|", "\\|"),
            ]
            out.append("| " + " | ".join(cells) + " |\n")
    return "".join(out)


def test_every_error_code_is_documented_with_its_hint() -> None:
    assert [row[0] for row in CODES + plugin_codes()] == list(ERROR_TAXONOMY)
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    missing = [code for code in ERROR_TAXONOMY if f"`{code}`" not in text]
    stale = [
        code for code, info in ERROR_TAXONOMY.items() if info.hint.replace("|", "\\|") not in text
    ]
    fix = f"run `python {Path(__file__).relative_to(DOCS.parent)} --write`"
    assert missing == [], f"undocumented codes in docs/errors.md: {missing}; {fix}"
    assert stale == [], f"docs/errors.md lacks the current hint of: {stale}; {fix}"


def test_every_builtin_profile_is_documented() -> None:
    text = (DOCS / "models.md").read_text(encoding="utf-8")
    builtin = [
        "openai",
        "deepseek",
        "qwen",
        "vllm",
        "llamacpp",
        "ollama",
        "openrouter",
        "zhipu",
        "moonshot",
        "generic",
    ]
    assert set(builtin) <= set(PROFILES)
    assert [name for name in builtin if f"`{name}`" not in text] == []


if __name__ == "__main__" and "--write" in sys.argv:
    path = DOCS / "errors.md"
    current = path.read_text(encoding="utf-8")
    path.write_text(current.split(MARKER, 1)[0] + render_tables(), encoding="utf-8")
    print(f"wrote {path}")
