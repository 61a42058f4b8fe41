"""Read a tool's description and per-parameter descriptions from its docstring.

Three common styles are understood: Google (``Args:`` sections), NumPy (``Parameters``
underlined with dashes) and reST (``:param name: text``). Anything else becomes part of
the description; nothing here ever raises on odd input.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_GOOGLE_PARAM_HEADERS = {"args", "arguments", "parameters", "params", "keyword args", "kwargs"}
_GOOGLE_OTHER_HEADERS = {
    "returns",
    "return",
    "yields",
    "yield",
    "raises",
    "raise",
    "examples",
    "example",
    "notes",
    "note",
    "see also",
    "references",
    "attributes",
    "warnings",
    "warning",
    "todo",
}
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_REST_FIELD = re.compile(r"^\s*:(param|parameter|arg|argument|key|keyword)\s+([^:]+):\s*(.*)$")
_REST_ANY_FIELD = re.compile(r"^\s*:[A-Za-z]+[^:]*:")
# "name (type): text", "name: text", "*name*: text"
_GOOGLE_ITEM = re.compile(r"^\**([A-Za-z_][A-Za-z0-9_]*)\**\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^\**([A-Za-z_][A-Za-z0-9_]*)\**\s*(?::\s*(.*))?$")


@dataclass
class ParsedDocstring:
    """The description part of a docstring and the text given for each parameter."""

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def _join(lines: list[str]) -> str:
    text = "\n".join(line.rstrip() for line in lines).strip()
    # Collapse wrapped lines inside a paragraph; keep blank-line paragraph breaks.
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "\n\n".join(paragraphs)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_section(lines: list[str], start: int) -> tuple[dict[str, str], int]:
    """Parse the items of a Google section starting after its header line."""
    params: dict[str, str] = {}
    current: str | None = None
    base: int | None = None
    i = start
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = _indent(line)
        if base is None:
            base = indent
        if indent < base or (indent == 0 and line.strip().endswith(":")):
            break
        if indent == base:
            match = _GOOGLE_ITEM.match(line.strip())
            if match:
                current = match.group(1)
                params[current] = match.group(2).strip()
            else:
                current = None
        elif current is not None:
            params[current] = f"{params[current]} {line.strip()}".strip()
        i += 1
    return params, i


def _numpy_section(lines: list[str], start: int) -> tuple[dict[str, str], int]:
    """Parse the items of a NumPy section starting after its underline."""
    params: dict[str, str] = {}
    current: str | None = None
    base: int | None = None
    i = start
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1]):
            break  # the next section's header
        indent = _indent(line)
        if base is None:
            base = indent
        if indent <= base:
            match = _NUMPY_ITEM.match(line.strip())
            current = match.group(1) if match else None
            if current is not None:
                params.setdefault(current, "")
        elif current is not None:
            params[current] = f"{params[current]} {line.strip()}".strip()
        i += 1
    return params, i


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split ``doc`` into a description and ``{parameter: description}``."""
    if not doc or not doc.strip():
        return ParsedDocstring()
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    in_description = True
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        header = stripped.rstrip(":").lower()
        # NumPy: a header line followed by a dashed underline.
        if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1]) and stripped:
            in_description = False
            if header in _GOOGLE_PARAM_HEADERS or header == "other parameters":
                found, i = _numpy_section(lines, i + 2)
                params.update(found)
            else:
                _, i = _numpy_section(lines, i + 2)
            continue
        # Google: "Args:" alone on its line.
        if stripped.endswith(":") and _indent(line) == 0 and header in _GOOGLE_PARAM_HEADERS:
            in_description = False
            found, i = _google_section(lines, i + 1)
            params.update(found)
            continue
        if stripped.endswith(":") and _indent(line) == 0 and header in _GOOGLE_OTHER_HEADERS:
            in_description = False
            _, i = _google_section(lines, i + 1)
            continue
        # reST fields.
        rest = _REST_FIELD.match(line)
        if rest:
            in_description = False
            name = rest.group(2).split()[-1]  # ":param int x:" names x
            text = [rest.group(3)]
            i += 1
            while i < len(lines) and lines[i].strip() and not _REST_ANY_FIELD.match(lines[i]):
                if _indent(lines[i]) == 0:
                    break
                text.append(lines[i].strip())
                i += 1
            params[name] = " ".join(t for t in text if t).strip()
            continue
        if _REST_ANY_FIELD.match(line):
            in_description = False
            i += 1
            continue
        if in_description:
            description.append(line)
        i += 1
    return ParsedDocstring(_join(description), {k: " ".join(v.split()) for k, v in params.items()})
