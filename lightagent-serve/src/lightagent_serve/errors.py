"""OpenAI-shaped error bodies, and the HTTP status for each ``LA-…`` code.

A client of an OpenAI-compatible API reads ``{"error": {message, type, param, code}}``
and the status; the official SDK turns the status into its exception class (400
``BadRequestError``, 401 ``AuthenticationError``, 404 ``NotFoundError``, 429
``RateLimitError``, 5xx ``InternalServerError`` …). Run errors keep their ``LA-…`` code
in ``code`` so a client can act on it. Message and extras pass the event log's redaction
(:func:`lightagent.redact`) first: a model error that quotes a key never hands it out.
"""

from __future__ import annotations

from typing import Any

from lightagent.redaction import redact, redact_text

__all__ = ["error_body", "error_type", "http_status"]

# Codes whose status is not their family's.
_BY_CODE = {
    "LA-CONFIG": 400,
    "LA-VALIDATION": 400,
    "LA-JSON": 400,
    "LA-REQUEST-TOO-LARGE": 413,
    "LA-SESSION-OWNER": 403,
    "LA-CANCELLED": 499,  # the client went away (nginx's "client closed request")
    "LA-429": 429,  # upstream rate limit: the client should back off too
    "LA-408": 504,
    "LA-503": 503,
    "LA-STORAGE-UNAVAILABLE": 503,
    "LA-APPROVAL-PENDING": 409,
}
_BY_FAMILY = {"policy": 403, "model": 502, "validation": 400}


def http_status(code: str | None) -> int:
    """The HTTP status a run error with ``code`` is answered with."""
    if not code:
        return 500
    if code in _BY_CODE:
        return _BY_CODE[code]
    from lightagent.errors import ERROR_TAXONOMY

    info = ERROR_TAXONOMY.get(code)
    return _BY_FAMILY.get(info.family, 500) if info is not None else 500


def error_type(status: int) -> str:
    """The OpenAI ``error.type`` for a status."""
    if status in (400, 404, 405, 409, 413, 422):
        return "invalid_request_error"
    if status == 401:
        return "invalid_request_error"  # what OpenAI answers for a wrong key
    if status == 403:
        return "permission_error"
    if status == 429:
        return "rate_limit_error"
    return "server_error"


def error_body(
    message: str, *, status: int, code: str | None = None, param: str | None = None, **extra: Any
) -> dict[str, Any]:
    """``{"error": {message, type, param, code, ...}}``, credentials redacted."""
    error = {"message": redact_text(message), "type": error_type(status), "param": param}
    error["code"] = code
    error.update(redact({k: v for k, v in extra.items() if v is not None}))
    return {"error": error}
