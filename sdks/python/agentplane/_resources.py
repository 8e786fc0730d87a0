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


class _Listable(_Resource):
    """A resource listed at ``base`` and read at ``base/{id}``."""

    base = ""

    def list(self, **query: Any) -> Any:
        """Every item, following the pages; filters and ``limit`` as keyword arguments."""
        return self._list(self.base, query)

    def page(self, **query: Any) -> Any:
        """One page: ``{"data": [...], "pagination": {...}}``."""
        return self._page(self.base, query)

    def retrieve(self, id: str) -> Any:
        return self._get(self.base + "/{id}", id=id)


class _Editable(_Listable):
    """A resource also created at ``base`` and changed at ``base/{id}``."""

    def create(self, idempotency_key: Optional[str] = None, **body: Any) -> Any:
        return self._post(self.base, body, idempotency_key)

    def update(self, id: str, **body: Any) -> Any:
        return self._patch(self.base + "/{id}", body, id=id)


class _Crud(_Editable):
    """An editable resource that can also be deleted."""

    def delete(self, id: str) -> Any:
        return self._delete(self.base + "/{id}", id=id)


class _Versions(_Resource):
    """The versions of an agent, prompt or data source at ``base/{id}/versions``."""

    base = ""

    def list(self, parent_id: str, **query: Any) -> Any:
        return self._list(self.base + "/{id}/versions", query, id=parent_id)

    def create(self, parent_id: str, idempotency_key: Optional[str] = None, **body: Any) -> Any:
        return self._post(self.base + "/{id}/versions", body, idempotency_key, id=parent_id)

    def retrieve(self, parent_id: str, version_id: str) -> Any:
        return self._get(self.base + "/{id}/versions/{version_id}", id=parent_id, version_id=version_id)

    def promote(self, parent_id: str, version_id: str) -> Any:
        """Makes the version the active one."""
        return self._post(self.base + "/{id}/versions/{version_id}/promote", id=parent_id, version_id=version_id)


class AgentVersions(_Versions):
    """An agent's versions (models.AgentVersion)."""

    base = "/agents"


class PromptVersions(_Versions):
    """A prompt's versions (models.PromptVersion)."""

    base = "/prompts"


class DataSourceVersions(_Versions):
    """A data source's versions (models.DataSourceVersion)."""

    base = "/data-sources"


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

    def playground(self, id: str, idempotency_key: Optional[str] = None, **body: Any) -> Any:
        """Runs an unsaved ``config`` like execute, recorded with metadata.source "playground"."""
        return self._post("/agents/{id}/playground", body, idempotency_key, id=id)

    def preview(self, id: str, **body: Any) -> Any:
        """The messages that would be sent for an input; no model call, nothing recorded."""
        return self._post("/agents/{id}/preview", body, id=id)


class Executions(_Listable):
    """Executions (models.Execution) and their streams; ``list`` filters by ``status``,
    ``agent_id``, ``session_id``, ``source``, ``created_after`` and ``created_before``."""

    base = "/executions"

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
    """Prompts (models.Prompt); ``versions`` holds their versions."""

    base = "/prompts"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.versions = PromptVersions(client)

    def preview(self, id: str, **body: Any) -> Any:
        """Renders the prompt with ``variables``."""
        return self._post("/prompts/{id}/preview", body, id=id)


class Credentials(_Crud):
    """Credentials (models.Credential); values only ever come back masked."""

    base = "/credentials"


class DataSources(_Crud):
    """Data sources (models.DataSource); ``versions`` holds their versions."""

    base = "/data-sources"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.versions = DataSourceVersions(client)

    def query(self, id: str, **body: Any) -> Any:
        """Runs a read-only ``query`` with ``params``."""
        return self._post("/data-sources/{id}/query", body, id=id)


class Triggers(_Crud):
    """Agent triggers (models.AgentTrigger)."""

    base = "/agent-triggers"


class Traces(_Listable):
    """Traces (models.Trace), each with its spans."""

    base = "/traces"

    def summary(self, **query: Any) -> Any:
        """Counts, tokens, cost and latency percentiles per agent over a window."""
        return self._client._request(_Call("GET", V1 + "/traces/summary", query=query))


class Scores(_Editable):
    """Scores (models.Score)."""

    base = "/scores"

    def agreement(self, **query: Any) -> Any:
        """How the newest judge score and the newest human score of each execution agree
        (``judge=``, ``human=``; models.ScoreAgreement)."""
        return self._client._request(_Call("GET", V1 + "/scores/agreement", {}, query))


class ScoreConfigs(_Editable):
    """Score configs (models.ScoreConfig)."""

    base = "/score-configs"


class LLMModels(_Crud):
    """The model catalog (models.LLMModel); built-ins are read-only."""

    base = "/llm-models"


class MCPTools(_Crud):
    """MCP tool servers (models.MCPTool)."""

    base = "/mcp-tools"

    def refresh(self, id: str) -> Any:
        """Lists the server's tools again."""
        return self._post("/mcp-tools/{id}/refresh", id=id)


class Guardrails(_Crud):
    """Guardrails (models.Guardrail)."""

    base = "/guardrails"

    def test(self, id: str, **body: Any) -> Any:
        """Runs the guardrail on a text."""
        return self._post("/guardrails/{id}/test", body, id=id)


class Memories(_Crud):
    """Memories (models.Memory)."""

    base = "/memories"


class Approvals(_Listable):
    """The approval inbox (models.Approval); decide with executions.approve and deny."""

    base = "/approvals"


class Assets(_Listable):
    """Assets (models.Asset)."""

    base = "/assets"

    def delete(self, id: str) -> Any:
        return self._delete("/assets/{id}", id=id)


class APIKeys(_Listable):
    """API keys (models.APIKey); a key's secret comes back once, from create and rotate."""

    base = "/api-keys"

    def create(self, **body: Any) -> Any:
        return self._post("/api-keys", body)

    def delete(self, id: str) -> Any:
        return self._delete("/api-keys/{id}", id=id)

    def rotate(self, id: str) -> Any:
        return self._post("/api-keys/{id}/rotate", id=id)


class DatasetItems(_Resource):
    """The items of a dataset (models.DatasetItem)."""

    def list(self, dataset_id: str, **query: Any) -> Any:
        return self._list("/datasets/{id}/items", query, id=dataset_id)

    def create(self, dataset_id: str, **body: Any) -> Any:
        """One item, or a batch with ``items=[...]`` (all or none)."""
        return self._post("/datasets/{id}/items", body, id=dataset_id)

    def retrieve(self, dataset_id: str, item_id: str) -> Any:
        return self._get("/datasets/{id}/items/{item_id}", id=dataset_id, item_id=item_id)

    def update(self, dataset_id: str, item_id: str, **body: Any) -> Any:
        return self._patch("/datasets/{id}/items/{item_id}", body, id=dataset_id, item_id=item_id)

    def delete(self, dataset_id: str, item_id: str) -> Any:
        return self._delete("/datasets/{id}/items/{item_id}", id=dataset_id, item_id=item_id)


class Datasets(_Crud):
    """Datasets (models.Dataset); their items at ``datasets.items``."""

    base = "/datasets"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.items = DatasetItems(client)


class Evaluators(_Crud):
    """Evaluators (models.Evaluator)."""

    base = "/evaluators"

    def test(self, id: str, **body: Any) -> Any:
        """Scores an output with the evaluator, recording nothing (models.EvaluationResult)."""
        return self._post("/evaluators/{id}/test", body, id=id)


class AnnotationQueues(_Crud):
    """Annotation queues (models.AnnotationQueue): human review of executions."""

    base = "/annotation-queues"

    def items(self, queue_id: str, **query: Any) -> Any:
        return self._list("/annotation-queues/{id}/items", query, id=queue_id)

    def add_items(self, queue_id: str, execution_ids: Any) -> Any:
        return self._post("/annotation-queues/{id}/items", {"execution_ids": list(execution_ids)}, id=queue_id)

    def next(self, queue_id: str) -> Any:
        """Claims the next item to review (models.AnnotationClaim)."""
        return self._post("/annotation-queues/{id}/next", id=queue_id)

    def complete(self, queue_id: str, item_id: str, scores: Any) -> Any:
        """Writes the review's scores and marks the item completed."""
        return self._post("/annotation-queues/{id}/items/{item_id}/complete", {"scores": list(scores)}, id=queue_id, item_id=item_id)


class OpenAI(_Resource):
    """The OpenAI-compatible endpoint (an agent's id or name is the model). Answers are OpenAI's
    shapes, without the envelope; OpenAI's own client works too, with base_url set to the
    server's ``/api/v1/openai``."""

    def chat_completions(self, **body: Any) -> Any:
        """Runs an agent as a chat completion, without stream (models.OpenAIChatCompletion)."""
        return self._client._page(_Call("POST", V1 + "/openai/chat/completions", {}, body=body))

    def responses(self, **body: Any) -> Any:
        """Runs an agent as a response, without stream (models.OpenAIResponse)."""
        return self._client._page(_Call("POST", V1 + "/openai/responses", {}, body=body))

    def models(self) -> Any:
        """The agents callable as models (models.OpenAIModelList)."""
        return self._client._page(_Call("GET", V1 + "/openai/models"))


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
        self.approvals = Approvals(client)
        self.score_configs = ScoreConfigs(client)
        self.llm_models = LLMModels(client)
        self.mcp_tools = MCPTools(client)
        self.guardrails = Guardrails(client)
        self.memories = Memories(client)
        self.datasets = Datasets(client)
        self.evaluators = Evaluators(client)
        self.annotation_queues = AnnotationQueues(client)
        self.openai = OpenAI(client)
