"""The official Python SDK of the agentplane API.

    from agentplane import Agentplane
    client = Agentplane()  # AGENTPLANE_URL, AGENTPLANE_API_KEY
    for e in client.executions.list(status="failed"):
        print(e["id"], e["error"])
"""

from . import models
from ._client import Agentplane, AsyncAgentplane, AsyncStream, Event, Stream
from ._errors import (
    AgentplaneError,
    APIConnectionError,
    APIError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    PlanLimitError,
    RateLimitError,
    StreamError,
    ValidationError,
)

__version__ = "1.0.0"

__all__ = [
    "Agentplane",
    "AsyncAgentplane",
    "Stream",
    "AsyncStream",
    "Event",
    "models",
    "AgentplaneError",
    "APIError",
    "APIConnectionError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "InternalServerError",
    "NotFoundError",
    "PermissionDeniedError",
    "PlanLimitError",
    "RateLimitError",
    "StreamError",
    "ValidationError",
]
