"""Docs stay complete: every ``LA-…`` code with its hint in docs/errors.md, every profile in docs/models.md."""

from __future__ import annotations

from pathlib import Path

from lightagent.errors import ERROR_TAXONOMY
from lightagent.models.profiles import PROFILES

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_every_error_code_is_documented_with_its_hint() -> None:
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    missing = [code for code in ERROR_TAXONOMY if f"`{code}`" not in text]
    rows = "\n".join(
        f"| `{c}` | {ERROR_TAXONOMY[c].message} | {ERROR_TAXONOMY[c].hint} |  ({ERROR_TAXONOMY[c].family})"
        for c in missing
    )
    assert missing == [], f"undocumented codes; add these rows to docs/errors.md:\n{rows}"
    stale = [
        code for code, info in ERROR_TAXONOMY.items() if info.hint.replace("|", "\\|") not in text
    ]
    assert stale == [], f"docs/errors.md lacks the current hint of: {stale}"


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
