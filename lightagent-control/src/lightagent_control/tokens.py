"""Approval tokens: HMAC-signed, operation-bound, expiring and single-use.

A token binds an operation (capability name), the SHA-256 digest of its canonical
arguments, the tenant, project, run, task, attempt and resource it was issued for. It is
signed with HMAC-SHA256 under a key from configuration (``LIGHTAGENT_APPROVAL_KEY`` or
``key=``); without a key nothing is issued. Its single use is recorded in a
:class:`TokenLedger`: the in-memory ledger serves one process; lightagent-review's
``SqlTokenLedger`` (SQLite file or PostgreSQL) makes a second use impossible across processes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from lightagent.digest import canonical_digest
from lightagent.errors import ApprovalError, ConfigurationError

__all__ = [
    "APPROVAL_KEY_ENV",
    "APPROVAL_TOKEN_SCHEMA_VERSION",
    "ApprovalToken",
    "InMemoryTokenLedger",
    "TokenLedger",
    "canonical_digest",
    "default_ledger",
    "resolve_approval_key",
]

APPROVAL_TOKEN_SCHEMA_VERSION = 1
APPROVAL_KEY_ENV = "LIGHTAGENT_APPROVAL_KEY"
_MIN_KEY_BYTES = 16


def resolve_approval_key(key: bytes | str | None = None) -> bytes:
    """The signing key: ``key`` if given, else ``$LIGHTAGENT_APPROVAL_KEY``; a typed error if neither."""
    raw = key if key is not None else os.environ.get(APPROVAL_KEY_ENV)
    if raw is None or raw == "" or raw == b"":
        raise ConfigurationError(
            "LA-APPROVAL-KEY",
            "no approval signing key configured",
            details={"env": APPROVAL_KEY_ENV},
        )
    data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    if len(data) < _MIN_KEY_BYTES:
        raise ConfigurationError(
            "LA-APPROVAL-KEY",
            f"the approval signing key is too short ({len(data)} bytes, need {_MIN_KEY_BYTES})",
        )
    return data


@runtime_checkable
class TokenLedger(Protocol):
    """Records token uses; a second ``consume`` of the same id must raise ``LA-APPROVAL-REPLAY``."""

    def consume(self, token_id: str, *, operation: str = "", run_id: str | None = None) -> None: ...

    def is_used(self, token_id: str) -> bool: ...


class InMemoryTokenLedger:
    """A process-local ledger (thread-safe). Use lightagent-review's ``SqlTokenLedger`` across processes."""

    def __init__(self) -> None:
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()

    def consume(self, token_id: str, *, operation: str = "", run_id: str | None = None) -> None:
        """Record the use; raises ``LA-APPROVAL-REPLAY`` if it was used before."""
        with self._lock:
            if token_id in self._used:
                raise ApprovalError(
                    "LA-APPROVAL-REPLAY",
                    "approval token already used",
                    details={"token_id": token_id, "operation": operation},
                )
            self._used[token_id] = time.time()

    def is_used(self, token_id: str) -> bool:
        """Whether the token was consumed."""
        with self._lock:
            return token_id in self._used


_DEFAULT_LEDGER = InMemoryTokenLedger()


def default_ledger() -> InMemoryTokenLedger:
    """The process-wide in-memory ledger gates use when none is given."""
    return _DEFAULT_LEDGER


_BOUND = ("tenant_id", "project_id", "run_id", "task_id", "attempt_id")


@dataclass(frozen=True)
class ApprovalToken:
    """A signed, expiring, single-use permission to run one operation with one set of arguments."""

    token_id: str
    operation: str
    argument_digest: str
    tenant_id: str | None = None
    project_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    attempt_id: str | None = None
    resource: str | None = None
    policy_version: str = "1"
    issued_at: float = 0.0
    expires_at: float = 0.0
    approver_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    schema_version: int = APPROVAL_TOKEN_SCHEMA_VERSION
    signature: str = ""

    @classmethod
    def issue(
        cls,
        operation: str,
        arguments: Any,
        context: Any = None,
        *,
        key: bytes | str | None = None,
        ttl_seconds: float = 300.0,
        resource: str | None = None,
        approver_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        now: float | None = None,
    ) -> ApprovalToken:
        """Sign a token for ``operation(arguments)`` in ``context`` (a SecurityContext or similar)."""
        secret = resolve_approval_key(key)
        if not operation:
            raise ConfigurationError("LA-CONFIG", "an approval token needs an operation")
        if not (isinstance(ttl_seconds, (int, float)) and ttl_seconds > 0):
            raise ConfigurationError("LA-CONFIG", f"ttl_seconds must be > 0, got {ttl_seconds!r}")
        issued = time.time() if now is None else now
        bound: dict[str, Any] = {name: getattr(context, name, None) for name in _BOUND}
        unsigned = cls(
            token_id=uuid.uuid4().hex,
            operation=operation,
            argument_digest=canonical_digest(arguments),
            resource=resource,
            policy_version=str(getattr(context, "policy_version", "1") or "1"),
            issued_at=issued,
            expires_at=issued + float(ttl_seconds),
            approver_id=approver_id,
            metadata=dict(metadata or {}),
            **bound,
        )
        return unsigned._signed(secret)

    def _signing_payload(self) -> bytes:
        data = asdict(self)
        data.pop("signature")
        data["metadata"] = dict(self.metadata)
        return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()

    def _signed(self, secret: bytes) -> ApprovalToken:
        sig = hmac.new(secret, self._signing_payload(), hashlib.sha256).hexdigest()
        return ApprovalToken(**{**asdict(self), "metadata": dict(self.metadata), "signature": sig})

    def check(
        self,
        operation: str,
        arguments: Any,
        context: Any = None,
        *,
        key: bytes | str | None = None,
        resource: str | None = None,
        now: float | None = None,
    ) -> None:
        """Check signature, expiry and binding without consuming; raises a typed ApprovalError."""
        secret = resolve_approval_key(key)
        expected = hmac.new(secret, self._signing_payload(), hashlib.sha256).hexdigest()
        if not self.signature or not hmac.compare_digest(expected, self.signature):
            raise ApprovalError(
                "LA-APPROVAL-MISMATCH",
                "approval token signature is invalid",
                details={"token_id": self.token_id, "field": "signature"},
            )
        current = time.time() if now is None else now
        if current >= self.expires_at:
            raise ApprovalError(
                "LA-APPROVAL-EXPIRED",
                "approval token expired",
                details={"token_id": self.token_id, "expires_at": self.expires_at},
            )
        mismatched = []
        if self.operation != operation:
            mismatched.append("operation")
        if self.argument_digest != canonical_digest(arguments):
            mismatched.append("arguments")
        if self.resource != resource:
            mismatched.append("resource")
        for name in _BOUND:
            if getattr(self, name) != getattr(context, name, None):
                mismatched.append(name)
        version = str(getattr(context, "policy_version", "1") or "1")
        if self.policy_version != version:
            mismatched.append("policy_version")
        if mismatched:
            raise ApprovalError(
                "LA-APPROVAL-MISMATCH",
                f"approval token does not fit this operation ({', '.join(mismatched)})",
                details={"token_id": self.token_id, "fields": mismatched},
            )

    def verify(
        self,
        operation: str,
        arguments: Any,
        context: Any = None,
        *,
        key: bytes | str | None = None,
        resource: str | None = None,
        ledger: TokenLedger | None = None,
        now: float | None = None,
    ) -> None:
        """:meth:`check`, then record the single use in ``ledger`` (the process ledger by default)."""
        self.check(operation, arguments, context, key=key, resource=resource, now=now)
        self.consume(ledger)

    def consume(self, ledger: TokenLedger | None = None) -> None:
        """Record the use; ``LA-APPROVAL-REPLAY`` if it was already used."""
        (ledger or _DEFAULT_LEDGER).consume(
            self.token_id, operation=self.operation, run_id=self.run_id
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form (including the signature)."""
        data = asdict(self)
        data["metadata"] = dict(self.metadata)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalToken:
        """Rebuild a token; unknown keys are a typed error."""
        try:
            return cls(**dict(data))
        except TypeError as exc:
            raise ApprovalError("LA-APPROVAL-MISMATCH", f"not an approval token: {exc}") from None

    def encode(self) -> str:
        """A compact text form (URL-safe base64 of the JSON) for transport."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> ApprovalToken:
        """Parse :meth:`encode` output; garbage is a typed error."""
        try:
            padded = text + "=" * (-len(text) % 4)
            data = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        except Exception:
            raise ApprovalError(
                "LA-APPROVAL-MISMATCH", "approval token text is malformed"
            ) from None
        if not isinstance(data, dict):
            raise ApprovalError("LA-APPROVAL-MISMATCH", "approval token text is malformed")
        return cls.from_dict(data)
