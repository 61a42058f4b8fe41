"""Map ``openai`` SDK exceptions to :class:`ModelError` and decide retries and waits.

Retried: 429, every 5xx, client-side timeouts and connection failures. Never retried:
any other 4xx (a 408 from the server included). ``Retry-After`` (seconds or an
HTTP date, or ``retry-after-ms``) is honoured up to ``max_wait``; otherwise the wait is
exponential with full jitter.
"""

from __future__ import annotations

import email.utils
import random
import time
from typing import Any

from lightagent.errors import ERROR_TAXONOMY, ModelError

__all__ = [
    "backoff_delay",
    "inband_error",
    "is_retryable",
    "retry_after_seconds",
    "status_to_code",
    "to_model_error",
]

_RETRY_STATUS = frozenset({429})


def status_to_code(status: int) -> str:
    """The ``LA-…`` code for an HTTP status (502 → LA-500, 504 → LA-503, other 4xx → LA-400)."""
    code = f"LA-{status}"
    if code in ERROR_TAXONOMY:
        return code
    if status == 504:
        return "LA-503"
    if status >= 500:
        return "LA-500"
    return "LA-400"


def inband_error(payload: dict[str, Any], **details: Any) -> ModelError:
    """A :class:`ModelError` for an ``{"error": {...}}`` object sent with HTTP 200."""
    error = payload.get("error")
    if not isinstance(error, dict):
        error = {"message": str(error)}
    status = error.get("status_code")
    code = error.get("code")
    if not isinstance(status, int):
        status = code if isinstance(code, int) else None
    la_code = status_to_code(status) if isinstance(status, int) and status >= 400 else "LA-PROVIDER"
    info: dict[str, Any] = {
        "status_code": status,
        "provider_error": error.get("message"),
        "in_band": True,
    }
    if code is not None and not isinstance(code, int):
        info["provider_code"] = code
    if error.get("failed_generation") is not None:
        info["failed_generation"] = error["failed_generation"]
        info["retry_by_reprompt"] = True
    metadata = error.get("metadata")
    if isinstance(metadata, dict) and metadata.get("raw"):
        info["provider_error"] = f"{error.get('message')}: {metadata['raw']}"
    info.update(details)
    message = f"the provider reported an error mid-response: {info['provider_error']}"
    return ModelError(la_code, message, details=info)


def _provider_message(body: Any, fallback: str) -> str:
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict):
        message = error.get("message") or fallback
        metadata = error.get("metadata")
        if isinstance(metadata, dict) and metadata.get("raw"):
            message = f"{message}: {metadata['raw']}"  # OpenRouter keeps the real reason here
        return str(message)
    if isinstance(error, str):
        return error
    return fallback


def to_model_error(exc: BaseException, *, attempts: int, model: str | None = None) -> ModelError:
    """A :class:`ModelError` with an ``LA-…`` code and details for an SDK/transport exception."""
    import openai

    details: dict[str, Any] = {"attempts": attempts, "model": model}
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        details["status_code"] = status
        details["provider_error"] = _provider_message(exc.body, exc.message)
        retry_after = retry_after_seconds(exc.response.headers)
        if retry_after is not None:
            details["retry_after"] = retry_after
        code = status_to_code(status)
        message = f"the model endpoint answered HTTP {status}: {details['provider_error']}"
        return ModelError(code, message, details=details)
    if isinstance(exc, openai.APITimeoutError):
        details["status_code"] = None
        return ModelError("LA-408", f"the model request timed out: {exc}", details=details)
    if isinstance(exc, openai.APIConnectionError):
        details["status_code"] = None
        cause = exc.__cause__ or exc
        details["provider_error"] = f"{type(cause).__name__}: {cause}"
        return ModelError(
            "LA-503",
            f"could not reach the model endpoint: {details['provider_error']}",
            hint="Check base_url and that the server is running; the call was retried.",
            details=details,
        )
    if isinstance(exc, openai.APIError):
        body = exc.body if isinstance(exc.body, dict) else {"message": exc.message}
        error = inband_error({"error": body}, attempts=attempts, model=model)
        return error
    details["status_code"] = None
    details["provider_error"] = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ValueError):  # a body that is not JSON
        return ModelError(
            "LA-MODEL-OUTPUT", f"the model endpoint sent unreadable JSON: {exc}", details=details
        )
    return ModelError(
        "LA-PROVIDER", f"the model call failed: {details['provider_error']}", details=details
    )


def is_retryable(error: ModelError) -> bool:
    """Whether a retry may help: rate limits, server errors, timeouts, lost connections."""
    status = error.details.get("status_code")
    if error.details.get("in_band"):
        return isinstance(status, int) and (status >= 500 or status == 429)
    if status is None:
        return error.code in ("LA-408", "LA-503", "LA-TRUNCATED")
    return status in _RETRY_STATUS or status >= 500


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` headers, or None."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(error: ModelError, attempt: int, *, base: float, max_wait: float) -> float:
    """The wait before retry number ``attempt`` (1-based): Retry-After if given, else jittered exponential."""
    retry_after = error.details.get("retry_after")
    if retry_after is not None:
        return min(float(retry_after), max_wait)
    return min(max_wait, random.uniform(0, base * (2 ** (attempt - 1))))
