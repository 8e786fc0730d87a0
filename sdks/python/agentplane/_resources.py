"""The API's resources, named as the API names them; one set serves both clients.

On :class:`~agentplane.Agentplane` a method returns the answer's ``data`` (a dict shaped as the
model in :mod:`agentplane.models` its docstring names), a list method an iterator over every item
(following ``next_cursor``), a stream method a :class:`~agentplane.Stream` of events. On
:class:`~agentplane.AsyncAgentplane` the same calls are awaited, and lists and streams are
iterated with ``async for``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ._call import _Call

V1 = "/api/v1"


class _Resource:
    def __init__(self, client: Any) -> None:
        self._client = client

    def _get(self, template: str, **params: str) -> Any:
        return self._client._request(_Call("GET", V1 + template, params))

    def _post(self, template: str, body: Any = None, idempotency_key: Optional[str] = None, **params: str) -> Any:
        return self._client._request(_Call("POST", V1 + template, params, body=body, idempotency_key=idempotency_key))

    def _patch(self, template: str, body: Any, **params: str) -> Any:
        return self._client._request(_Call("PATCH", V1 + template, params, body=body))

    def _delete(self, template: str, **params: str) -> Any:
        return self._client._request(_Call("DELETE", V1 + template, params))

    def _list(self, template: str, query: Mapping[str, Any], **params: str) -> Any:
        return self._client._paginate(_Call("GET", V1 + template, params, query))

    def _page(self, template: str, query: Mapping[str, Any], **params: str) -> Any:
        return self._client._page(_Call("GET", V1 + template, params, query))


class _Crud(_Resource):
    """The usual five operations on ``base`` and ``base/{id}``."""

    base = ""

    def list(self, **query: Any) -> Any:
        """Every item, following the pages; filters and ``limit`` as keyword arguments."""
        return self._list(self.base, query)

    def page(self, **query: Any) -> Any:
        """One page: ``{"data": [...], "pagination": {...}}``."""
        return self._page(self.base, query)

    def create(self, idempotency_key: Optional[str] = None, **body: Any) -> Any:
        return self._post(self.base, body, idempotency_key)

    def retrieve(self, id: str) -> Any:
        return self._get(self.base + "/{id}", id=id)

    def update(self, id: str, **body: Any) -> Any:
        return self._patch(self.base + "/{id}", body, id=id)

    def delete(self, id: str) -> Any:
        return self._delete(self.base + "/{id}", id=id)


class AgentVersions(_Resource):
    """An agent's versions (models.AgentVersion)."""

    def list(self, agent_id: str, **query: Any) -> Any:
        return self._list("/agents/{id}/versions", query, id=agent_id)

    def create(self, agent_id: str, idempotency_key: Optional[str] = None, **body: Any) -> Any:
        return self._post("/agents/{id}/versions", body, idempotency_key, id=agent_id)

    def retrieve(self, agent_id: str, version_id: str) -> Any:
        return self._get("/agents/{id}/versions/{version_id}", id=agent_id, version_id=version_id)

    def promote(self, agent_id: str, version_id: str) -> Any:
        """Makes the version the agent's active one."""
        return self._post("/agents/{id}/versions/{version_id}/promote", id=agent_id, version_id=version_id)


class Agents(_Crud):
    """Agents (models.Agent); ``versions`` holds their versions."""

    base = "/agents"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.versions = AgentVersions(client)

    def execute(self, id: str, idempotency_key: Optional[str] = None, **body: Any) -> Any:
        """Runs the agent (``input=…``): the finished execution, or with ``async_=True`` the pending one."""
        if "async_" in body:
            body["async"] = body.pop("async_")
        return self._post("/agents/{id}/execute", body, idempotency_key, id=id)

    def preview(self, id: str, **body: Any) -> Any:
        """The messages that would be sent for an input; no model call, nothing recorded."""
        return self._post("/agents/{id}/preview", body, id=id)


class Executions(_Resource):
    """Executions (models.Execution) and their streams."""

    def list(self, **query: Any) -> Any:
        """Every execution matching the filters (``status``, ``agent_id``, …), newest first."""
        return self._list("/executions", query)

    def retrieve(self, id: str) -> Any:
        return self._get("/executions/{id}", id=id)

    def tree(self, id: str) -> Any:
        """The execution with its nested child executions."""
        return self._get("/executions/{id}/tree", id=id)

    def cancel(self, id: str) -> Any:
        return self._post("/executions/{id}/cancel", id=id)

    def approve(self, id: str, **body: Any) -> Any:
        return self._post("/executions/{id}/approve", body, id=id)

    def deny(self, id: str, **body: Any) -> Any:
        return self._post("/executions/{id}/deny", body, id=id)

    def stream(self, id: str, last_event_id: Optional[int] = 0) -> Any:
        """The execution's frames up to its terminal one: after ``last_event_id`` (0, the
        default: every frame; None: from now on), resumed after a dropped connection."""
        return self._client._stream(_Call("GET", V1 + "/executions/{id}/stream", {"id": id}), last_event_id)


class ChatMessages(_Resource):
    """A chat session's messages (models.ChatMessage)."""

    def list(self, session_id: str, **query: Any) -> Any:
        """The session's messages, oldest first."""
        return self._list("/chat/sessions/{id}/messages", query, id=session_id)

    def create(self, session_id: str, content: str, idempotency_key: Optional[str] = None) -> Any:
        """Sends a message and waits for the assistant's reply."""
        return self._post("/chat/sessions/{id}/messages", {"content": content}, idempotency_key, id=session_id)

    def stream(self, session_id: str, content: str, idempotency_key: Optional[str] = None) -> Any:
        """Sends a message and streams the reply; a dropped connection is resumed by the same
        POST with the same Idempotency-Key and Last-Event-ID: no second turn, no frame twice."""
        call = _Call("POST", V1 + "/chat/sessions/{id}/messages/stream", {"id": session_id}, body={"content": content},
                     idempotency_key=idempotency_key)
        return self._client._stream(call, None)


class ChatSessions(_Crud):
    """Chat sessions (models.ChatSession); ``messages`` holds their turns."""

    base = "/chat/sessions"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.messages = ChatMessages(client)


class Chat:
    """Chat: ``client.chat.sessions``."""

    def __init__(self, client: Any) -> None:
        self.sessions = ChatSessions(client)


class Prompts(_Crud):
    """Prompts (models.Prompt)."""

    base = "/prompts"

    def preview(self, id: str, **body: Any) -> Any:
        """Renders the prompt with ``variables``."""
        return self._post("/prompts/{id}/preview", body, id=id)


class Credentials(_Crud):
    """Credentials (models.Credential); values only ever come back masked."""

    base = "/credentials"


class DataSources(_Crud):
    """Data sources (models.DataSource)."""

    base = "/data-sources"

    def query(self, id: str, **body: Any) -> Any:
        """Runs a read-only ``query`` with ``params``."""
        return self._post("/data-sources/{id}/query", body, id=id)


class Triggers(_Crud):
    """Agent triggers (models.AgentTrigger)."""

    base = "/agent-triggers"


class Traces(_Resource):
    """Traces (models.Trace), each with its spans."""

    def list(self, **query: Any) -> Any:
        return self._list("/traces", query)

    def retrieve(self, id: str) -> Any:
        return self._get("/traces/{id}", id=id)


class Scores(_Resource):
    """Scores (models.Score)."""

    def list(self, **query: Any) -> Any:
        return self._list("/scores", query)

    def create(self, idempotency_key: Optional[str] = None, **body: Any) -> Any:
        return self._post("/scores", body, idempotency_key)

    def retrieve(self, id: str) -> Any:
        return self._get("/scores/{id}", id=id)

    def update(self, id: str, **body: Any) -> Any:
        return self._patch("/scores/{id}", body, id=id)


class Assets(_Resource):
    """Assets (models.Asset)."""

    def list(self, **query: Any) -> Any:
        return self._list("/assets", query)

    def retrieve(self, id: str) -> Any:
        return self._get("/assets/{id}", id=id)

    def delete(self, id: str) -> Any:
        return self._delete("/assets/{id}", id=id)


class APIKeys(_Resource):
    """API keys (models.APIKey); a key's secret comes back once, from create and rotate."""

    def list(self, **query: Any) -> Any:
        return self._list("/api-keys", query)

    def create(self, idempotency_key: Optional[str] = None, **body: Any) -> Any:
        return self._post("/api-keys", body, idempotency_key)

    def retrieve(self, id: str) -> Any:
        return self._get("/api-keys/{id}", id=id)

    def delete(self, id: str) -> Any:
        return self._delete("/api-keys/{id}", id=id)

    def rotate(self, id: str) -> Any:
        return self._post("/api-keys/{id}/rotate", id=id)


class Resources:
    """Mixed into both clients: one attribute per resource."""

    def __init__(self, client: Any) -> None:
        self.agents = Agents(client)
        self.prompts = Prompts(client)
        self.executions = Executions(client)
        self.chat = Chat(client)
        self.traces = Traces(client)
        self.scores = Scores(client)
        self.credentials = Credentials(client)
        self.data_sources = DataSources(client)
        self.triggers = Triggers(client)
        self.assets = Assets(client)
        self.api_keys = APIKeys(client)
