"""The errors the SDK raises: one class per status of the API's error envelope."""

from __future__ import annotations

import email.utils
import time
from typing import Dict, Optional, Type

import httpx


class AgentplaneError(Exception):
    """Every error the SDK raises."""


class APIError(AgentplaneError):
    """The server answered with an error envelope: ``status``, the stable ``code`` and its ``message``."""

    def __init__(self, status: int, code: str, message: str, headers: httpx.Headers) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.request_id: Optional[str] = headers.get("x-request-id")


class BadRequestError(APIError):
    """400 ``bad_request``: malformed JSON, a wrong type or an out-of-range parameter."""


class AuthenticationError(APIError):
    """401 ``unauthorized``: the API key or token is missing, invalid or expired."""


class PlanLimitError(APIError):
    """402 ``plan_limit_exceeded``: the workspace's plan allows no more."""


class PermissionDeniedError(APIError):
    """403 ``forbidden``: the key lacks a scope, or the address or origin is not allowed."""


class NotFoundError(APIError):
    """404 ``not_found``: no such resource in this workspace."""


class ConflictError(APIError):
    """409 ``conflict``: the resource's state forbids it, or an Idempotency-Key was reused."""


class ValidationError(APIError):
    """422 ``validation_error``: well-formed but invalid values."""


class RateLimitError(APIError):
    """429 ``rate_limited``: ``retry_after`` says how many seconds to wait."""

    def __init__(self, status: int, code: str, message: str, headers: httpx.Headers) -> None:
        super().__init__(status, code, message, headers)
        self.retry_after: Optional[float] = retry_after_seconds(headers)


class InternalServerError(APIError):
    """5xx: the server failed; ``request_id`` finds the cause in its log."""


class APIConnectionError(AgentplaneError):
    """No answer: the connection failed or was cut, or the request timed out."""


class StreamError(AgentplaneError):
    """A stream ended or broke and could not be resumed within the retries allowed."""


_BY_STATUS: Dict[int, Type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: PlanLimitError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: ValidationError,
    429: RateLimitError,
}


def error_for(response: httpx.Response) -> APIError:
    """The error class of an error answer, read from its envelope (or its status alone)."""
    code, message = f"http_{response.status_code}", response.reason_phrase or "request failed"
    try:
        env = response.json()
        if isinstance(env, dict):
            if isinstance(env.get("error"), str):
                code = env["error"]
            if isinstance(env.get("message"), str) and env["message"]:
                message = env["message"]
            inner = env.get("error")
            if isinstance(inner, dict):  # the OpenAI-compatible endpoint's error object
                if isinstance(inner.get("code"), str):
                    code = inner["code"]
                if isinstance(inner.get("message"), str) and inner["message"]:
                    message = inner["message"]
    except ValueError:
        pass  # not an envelope (a proxy's page): keep the status text
    status = response.status_code
    cls = _BY_STATUS.get(status, InternalServerError if status >= 500 else APIError)
    return cls(status, code, message, response.headers)


def retry_after_seconds(headers: httpx.Headers) -> Optional[float]:
    """Retry-After in seconds (a number or an HTTP date); None when absent or unreadable."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, at.timestamp() - time.time())
