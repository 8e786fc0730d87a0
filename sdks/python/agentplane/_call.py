"""One request of the API, as the resources describe it to the clients."""

from __future__ import annotations

import uuid
from typing import Any, Mapping, Optional

from .models import IDEMPOTENT_POSTS


class _Call:
    """One request: method, the route's path template and what fills it."""

    def __init__(
        self,
        method: str,
        template: str,
        params: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        stream: bool = False,
    ) -> None:
        self.method = method
        self.template = template
        self.params = dict(params or {})
        self.query = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        self.body = body
        self.idempotent = method == "POST" and template in IDEMPOTENT_POSTS
        self.idempotency_key = idempotency_key or (str(uuid.uuid4()) if self.idempotent else None)
        self.headers = dict(headers or {})
        self.stream = stream

    @property
    def safe(self) -> bool:
        """Whether a 5xx or a connection error may be retried: a GET, or a POST with its key."""
        return self.method == "GET" or self.idempotent


def _query_value(v: Any) -> Any:
    return ("true" if v else "false") if isinstance(v, bool) else v
