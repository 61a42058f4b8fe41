"""Spotting literal credentials: key names, provider key shapes and placeholders."""

from __future__ import annotations

import re
from typing import Any

from lightagent_contracts.connectors.findings import Finding

__all__ = [
    "CREDENTIAL_KEY",
    "TOKEN_SHAPES",
    "check_credentials_in_mapping",
    "is_placeholder",
    "literal_credential",
    "literal_setting_secret",
]

CREDENTIAL_KEY = re.compile(
    r"(?i)(api[_-]?key|apikey|secret|(^|[_-])token$|access[_-]?token|auth[_-]?token|"
    r"passw(or)?d|authorization|access[_-]?key|private[_-]?key|credential)"
)
# Shapes of well-known provider keys, flagged wherever they appear.
TOKEN_SHAPES = re.compile(
    r"(sk-(proj-|ant-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|"
    r"xox[abpr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,})"
)
_PLACEHOLDER_HINTS = (
    "${",
    "{{",
    "your_",
    "your-",
    "replace",
    "env:",
    "changeme",
    "example",
    "xxx",
    "...",
    "<",
)


def is_placeholder(value: str) -> bool:
    """True for values that are clearly not a real secret (``${VAR}``, ``<key>``, ``your_key``…)."""
    text = value.strip()
    return len(text) < 8 or " " in text or _reference(text)


def _reference(text: str) -> bool:
    # Marked as a placeholder, or an environment-variable name (OPENAI_API_KEY).
    lowered = text.lower()
    return any(h in lowered for h in _PLACEHOLDER_HINTS) or bool(
        re.fullmatch(r"[A-Z][A-Z0-9_]*", text)
    )


_AUTH_SCHEME = re.compile(r"(?i)^(bearer|basic|token|digest)\s+(\S.*)$")
_URL_PASSWORD = re.compile(r"://[^/\s:@]+:([^/\s@]+)@")
# A key that names where a secret is, not the secret (PASSWORD_FILE=/run/secrets/db).
_POINTER_KEY = re.compile(r"(?i)[_-](file|path|dir|env|var|name)$")


def literal_setting_secret(key: str, value: Any) -> bool:
    """The stricter rule for MCP ``headers`` and ``env``, which should hold ``${ENV_VAR}``
    references: any non-reference value of a credential key (however short), any
    ``Bearer …``/``Basic …`` value, a password in a URL, or a provider key shape."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if TOKEN_SHAPES.search(text):
        return True
    if "${" in text:
        return False
    if re.match(r"(sk|gh[pousr]|hf|xox[abpr])[-_]\w{3,}", text):
        return True
    scheme = _AUTH_SCHEME.match(text)
    if scheme:
        return not _reference(scheme.group(2))
    password = _URL_PASSWORD.search(text)
    if password:
        return not _reference(password.group(1))
    if (CREDENTIAL_KEY.search(key) or key.lower() == "cookie") and not _POINTER_KEY.search(key):
        return bool(text) and not _reference(text)
    return False


def literal_credential(key: str, value: Any) -> bool:
    if not isinstance(value, str):
        return False
    if TOKEN_SHAPES.search(value):
        return True
    if not CREDENTIAL_KEY.search(key):
        return False
    text = value.removeprefix("Bearer ").removeprefix("bearer ").removeprefix("Basic ")
    # Real secrets are long and mix letters and digits; "plain-value" or "anything" are not.
    looks_random = len(text) >= 12 and re.search(r"[A-Za-z]", text) and re.search(r"\d", text)
    return bool(looks_random) and not is_placeholder(text)


def check_credentials_in_mapping(data: Any, location: str, path: str = "") -> list[Finding]:
    """LAV070 for each credential-like key holding a literal (non-placeholder) value."""
    out: list[Finding] = []
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(value, str) and literal_credential(str(key), value):
                out.append(
                    Finding.make(
                        "LAV070",
                        f"`{where}` holds a literal credential",
                        location,
                        hint='Read it from the environment instead, e.g. "${OPENAI_API_KEY}".',
                    )
                )
            else:
                out.extend(check_credentials_in_mapping(value, location, where))
    elif isinstance(data, list):
        for index, item in enumerate(data):
            out.extend(check_credentials_in_mapping(item, location, f"{path}[{index}]"))
    elif isinstance(data, str) and TOKEN_SHAPES.search(data):
        out.append(Finding.make("LAV070", f"`{path}` holds a literal credential", location))
    return out
