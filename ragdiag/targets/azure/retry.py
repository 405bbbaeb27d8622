"""Which failures are retried, after how long, and what the user is told about the others.

`classify` turns an exception of one HTTP attempt into either `Retryable` (timeouts,
dropped connections, malformed 2xx bodies, HTTP 408/429/5xx; 429 and 503 count as
throttling and carry the service's `Retry-After` / `retry-after-ms`) or a `TargetError`
with a message that names the cause (rejected credentials, `AuthRejectedError`, which
the runner's circuit breaker counts; not found; a rejected request). `backoff_delay` is the wait before the next attempt: the service's
retry-after when it gave one, else exponential backoff with jitter.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Mapping

from ragdiag.errors import AuthRejectedError, TargetError

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
THROTTLE_STATUS = frozenset({429, 503})


class MalformedResponse(Exception):
    """A 2xx answer whose body is not the JSON it should be."""


class Retryable(Exception):
    """A failed attempt worth repeating (`throttled` for 429/503)."""

    def __init__(self, reason: str, retry_after: float | None = None, throttled: bool = False,
                 unreachable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.throttled = throttled
        self.unreachable = unreachable  # no answer at all: refused, reset, dropped, timed out


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms`, `x-ms-retry-after-ms` or `Retry-After`."""
    if not headers:
        return None
    lower = {str(k).lower(): v for k, v in headers.items()}
    for h in ("retry-after-ms", "x-ms-retry-after-ms"):
        if lower.get(h):
            try:
                return max(0.0, float(lower[h]) / 1000.0)
            except ValueError:
                pass
    ra = lower.get("retry-after")
    if ra:
        try:
            return max(0.0, float(ra))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(ra)
                return max(0.0, when.timestamp() - time.time())
            except (TypeError, ValueError):
                return None
    return None


def backoff_delay(attempt: int, retry_after_s: float | None, *, backoff_s: float,
                  max_backoff_s: float, rng: random.Random) -> float:
    """Seconds before attempt `attempt + 1`."""
    if retry_after_s is not None:
        return min(retry_after_s, max(max_backoff_s, 60.0)) * rng.uniform(1.0, 1.1)
    base = min(max_backoff_s, backoff_s * (2 ** attempt))
    return base * rng.uniform(0.5, 1.0)


def service_message(exc: BaseException) -> str:
    """The service's error message (OData `error.message`), else the exception's first line."""
    err = getattr(exc, "error", None)
    msg = getattr(err, "message", None) if err is not None else None
    if msg:
        return str(msg)
    text = str(getattr(exc, "message", None) or exc)
    return text.splitlines()[0] if text else type(exc).__name__


def classify(exc: BaseException, what: str, *, endpoint: str, credentials_hint: str,
             timeout_s: float | None = None) -> Retryable | TargetError:
    """A retryable failure or the error to raise, for one failed HTTP attempt.

    `timeout_s` is the per-attempt timeout, which is also the transport's connection and
    read timeout: whichever of the two fires first, the reason reads the same.
    """
    from azure.core import exceptions as azure_exc
    from azure.core.exceptions import (
        ClientAuthenticationError,
        DecodeError,
        DeserializationError,
        HttpResponseError,
        ResourceNotFoundError,
        ServiceRequestError,
        ServiceResponseError,
    )

    response_timeout = getattr(azure_exc, "ServiceResponseTimeoutError", None)
    request_timeout = getattr(azure_exc, "ServiceRequestTimeoutError", None)
    limit = f" within {timeout_s:g} s" if timeout_s is not None else ""
    if response_timeout is not None and isinstance(exc, response_timeout):
        return Retryable(f"no answer{limit} ({type(exc).__name__})", unreachable=True)
    if request_timeout is not None and isinstance(exc, request_timeout):
        return Retryable(f"no connection{limit} ({type(exc).__name__})", unreachable=True)

    status = getattr(exc, "status_code", None)
    if isinstance(exc, DecodeError | DeserializationError | json.JSONDecodeError
                  | MalformedResponse):  # DecodeError is an HttpResponseError (HTTP 200)
        return Retryable(f"malformed response ({type(exc).__name__})")
    if isinstance(exc, HttpResponseError) and status is not None:
        if status in (401, 403):  # counted by the runner's circuit breaker (kind "auth")
            return AuthRejectedError(f"the search service rejected the credentials (HTTP {status}): "
                                     f"{credentials_hint}")
        if status in RETRY_STATUS:
            headers = getattr(getattr(exc, "response", None), "headers", None)
            return Retryable(f"HTTP {status}", retry_after(headers) if status in
                             THROTTLE_STATUS else None, throttled=status in THROTTLE_STATUS)
        if isinstance(exc, ResourceNotFoundError) or status == 404:
            return TargetError(f"{what}: not found at {endpoint} (HTTP 404): "
                               f"{service_message(exc)}")
        return TargetError(f"the search service rejected the {what} (HTTP {status}): "
                           f"{service_message(exc)}")
    if isinstance(exc, ClientAuthenticationError):
        return AuthRejectedError(f"could not authenticate to the search service: "
                                 f"{type(exc).__name__}: {service_message(exc)}; {credentials_hint}")
    if isinstance(exc, ServiceResponseError):
        return Retryable(f"connection dropped ({type(exc).__name__})", unreachable=True)
    if isinstance(exc, ServiceRequestError):
        return Retryable(f"connection failed ({type(exc).__name__}: {exc})", unreachable=True)
    if isinstance(exc, ConnectionError | OSError):
        return Retryable(f"connection error ({type(exc).__name__})", unreachable=True)
    return TargetError(f"{what} failed: {type(exc).__name__}: {exc}")
