import { newKey, type Core, type Page, type PageIterator, type Query, type RequestOptions } from "./core.js";
import { Stream } from "./stream.js";
import type { components, operations } from "./schema.js";

/** A schema of the API by name. */
export type Schema<K extends keyof components["schemas"]> = components["schemas"][K];

/** The JSON body an operation takes. */
type Body<Op extends keyof operations> = operations[Op] extends {
  requestBody: { content: { "application/json": infer B } };
}
  ? B
  : never;

/** The query parameters an operation takes (paging included for lists). */
type QueryOf<Op extends keyof operations> = operations[Op]["parameters"] extends { query?: infer Q } ? NonNullable<Q> : never;

/** The data of an operation's 200 (or 201, 202) answer. */
type Data<Op extends keyof operations> = operations[Op]["responses"] extends infer R
  ? R extends { 200: { content: { "application/json": { data: infer D } } } }
    ? D
    : R extends { 201: { content: { "application/json": { data: infer D } } } }
      ? D
      : R extends { 202: { content: { "application/json": { data: infer D } } } }
        ? D
        : never
  : never;

/** The body of an operation's 200 answer as it is (no envelope: the OpenAI-compatible endpoint). */
type Plain<Op extends keyof operations> = operations[Op]["responses"] extends { 200: { content: { "application/json": infer B } } } ? B : never;

/** The item type of a list operation. */
type Item<Op extends keyof operations> = Data<Op> extends (infer T)[] ? T : never;

const v1 = "/api/v1";

/** Base of every resource: the shared transport. */
class Resource {
  constructor(protected readonly core: Core) {}

  protected get<T>(template: string, params: Record<string, string>, query?: Query, options?: RequestOptions): Promise<T> {
    return this.core.json<T>({ method: "GET", template, params, query, options });
  }

  protected post<T>(template: string, params: Record<string, string>, body: unknown, options?: RequestOptions): Promise<T> {
    return this.core.json<T>({ method: "POST", template, params, body, options });
  }

  protected patch<T>(template: string, params: Record<string, string>, body: unknown, options?: RequestOptions): Promise<T> {
    return this.core.json<T>({ method: "PATCH", template, params, body, options });
  }

  protected del<T>(template: string, params: Record<string, string>, options?: RequestOptions): Promise<T> {
    return this.core.json<T>({ method: "DELETE", template, params, options });
  }

  protected pages<T>(template: string, params: Record<string, string>, query?: object, options?: RequestOptions): PageIterator<T> {
    return this.core.list<T>({ method: "GET", template, params, query: query as Query, options });
  }
}

/**
 * A resource listed and created at `${base}`, read and changed at `${base}/{id}`; the type
 * parameters name the operationIds of list, create, get and update.
 */
class Editable<L extends keyof operations, C extends keyof operations, G extends keyof operations, U extends keyof operations> extends Resource {
  constructor(
    core: Core,
    protected readonly base: string,
  ) {
    super(core);
  }
  list(query?: QueryOf<L>, options?: RequestOptions): PageIterator<Item<L>> {
    return this.pages(v1 + this.base, {}, query, options);
  }
  create(body: Body<C>, options?: RequestOptions): Promise<Data<C>> {
    return this.post(v1 + this.base, {}, body, options);
  }
  retrieve(id: string, options?: RequestOptions): Promise<Data<G>> {
    return this.get(v1 + this.base + "/{id}", { id }, undefined, options);
  }
  update(id: string, body: Body<U>, options?: RequestOptions): Promise<Data<U>> {
    return this.patch(v1 + this.base + "/{id}", { id }, body, options);
  }
}

/** An Editable resource that can also be deleted (operationId D). */
class Crud<
  L extends keyof operations,
  C extends keyof operations,
  G extends keyof operations,
  U extends keyof operations,
  D extends keyof operations,
> extends Editable<L, C, G, U> {
  delete(id: string, options?: RequestOptions): Promise<Data<D>> {
    return this.del(v1 + this.base + "/{id}", { id }, options);
  }
}

/**
 * The versions of an agent, prompt or data source at `${base}/{id}/versions`; the type
 * parameters name the operationIds of list, create, get and promote.
 */
class Versions<L extends keyof operations, C extends keyof operations, G extends keyof operations, P extends keyof operations> extends Resource {
  constructor(
    core: Core,
    private readonly base: string,
  ) {
    super(core);
  }
  list(parentId: string, query?: QueryOf<L>, options?: RequestOptions): PageIterator<Item<L>> {
    return this.pages(v1 + this.base + "/{id}/versions", { id: parentId }, query, options);
  }
  create(parentId: string, body: Body<C>, options?: RequestOptions): Promise<Data<C>> {
    return this.post(v1 + this.base + "/{id}/versions", { id: parentId }, body, options);
  }
  retrieve(parentId: string, versionId: string, options?: RequestOptions): Promise<Data<G>> {
    return this.get(v1 + this.base + "/{id}/versions/{version_id}", { id: parentId, version_id: versionId }, undefined, options);
  }
  /** Makes the version the active one. */
  promote(parentId: string, versionId: string, options?: RequestOptions): Promise<Data<P>> {
    return this.post(v1 + this.base + "/{id}/versions/{version_id}/promote", { id: parentId, version_id: versionId }, undefined, options);
  }
}

/** Agents: `client.agents`. */
export class Agents extends Crud<"listAgents", "createAgent", "getAgent", "updateAgent", "deleteAgent"> {
  /** An agent's versions: `client.agents.versions`. */
  readonly versions: AgentVersions;

  constructor(core: Core) {
    super(core, "/agents");
    this.versions = new AgentVersions(core);
  }
  /** Runs the agent: sync (the finished execution) or with `async: true` (202, pending). */
  execute(id: string, body: Body<"executeAgent">, options?: RequestOptions): Promise<Data<"executeAgent">> {
    return this.post(v1 + "/agents/{id}/execute", { id }, body, options);
  }
  /** Runs an unsaved config like execute, recorded with metadata.source "playground". */
  playground(id: string, body: Body<"playgroundAgent">, options?: RequestOptions): Promise<Data<"playgroundAgent">> {
    return this.post(v1 + "/agents/{id}/playground", { id }, body, options);
  }
  /** The messages that would be sent for an input; no model call, nothing recorded. */
  preview(id: string, body: Body<"previewAgent">, options?: RequestOptions): Promise<Data<"previewAgent">> {
    return this.post(v1 + "/agents/{id}/preview", { id }, body, options);
  }
}

/** An agent's versions: `client.agents.versions`. */
export class AgentVersions extends Versions<"listAgentVersions", "createAgentVersion", "getAgentVersion", "promoteAgentVersion"> {
  constructor(core: Core) {
    super(core, "/agents");
  }
}

/** Options of a stream. */
export interface StreamOptions extends RequestOptions {
  /** Start after this frame; default 0 (every frame from the first). null: from now on. */
  lastEventId?: number | null;
}

/** Executions: `client.executions`. */
export class Executions extends Resource {
  list(query?: QueryOf<"listExecutions">, options?: RequestOptions): PageIterator<Item<"listExecutions">> {
    return this.pages(v1 + "/executions", {}, query, options);
  }
  retrieve(id: string, options?: RequestOptions): Promise<Data<"getExecution">> {
    return this.get(v1 + "/executions/{id}", { id }, undefined, options);
  }
  /** The execution with its nested child executions. */
  tree(id: string, options?: RequestOptions): Promise<Data<"getExecutionTree">> {
    return this.get(v1 + "/executions/{id}/tree", { id }, undefined, options);
  }
  cancel(id: string, options?: RequestOptions): Promise<Data<"cancelExecution">> {
    return this.post(v1 + "/executions/{id}/cancel", { id }, undefined, options);
  }
  approve(id: string, body: Body<"approveExecution"> = {}, options?: RequestOptions): Promise<Data<"approveExecution">> {
    return this.post(v1 + "/executions/{id}/approve", { id }, body, options);
  }
  deny(id: string, body: Body<"denyExecution"> = {}, options?: RequestOptions): Promise<Data<"denyExecution">> {
    return this.post(v1 + "/executions/{id}/deny", { id }, body, options);
  }
  /** The execution's frames up to its terminal one, resumed after a dropped connection. */
  stream(id: string, options: StreamOptions = {}): Stream {
    const open = (last: number | null) =>
      this.core.send({
        method: "GET",
        template: v1 + "/executions/{id}/stream",
        params: { id },
        headers: last === null ? {} : { "Last-Event-ID": String(last) },
        options,
        stream: true,
      });
    return new Stream(this.core, open, options.lastEventId === undefined ? 0 : options.lastEventId, options.signal);
  }
}

/** Chat: `client.chat.sessions`. */
export class Chat {
  readonly sessions: ChatSessions;
  constructor(core: Core) {
    this.sessions = new ChatSessions(core);
  }
}

/** Chat sessions and, under `messages`, their turns. */
export class ChatSessions extends Crud<"listChatSessions", "createChatSession", "getChatSession", "updateChatSession", "deleteChatSession"> {
  readonly messages: ChatMessages;

  constructor(core: Core) {
    super(core, "/chat/sessions");
    this.messages = new ChatMessages(core);
  }
}

/** A chat session's messages. */
export class ChatMessages extends Resource {
  /** The session's messages, oldest first. */
  list(sessionId: string, query?: QueryOf<"listChatMessages">, options?: RequestOptions): PageIterator<Item<"listChatMessages">> {
    return this.pages(v1 + "/chat/sessions/{id}/messages", { id: sessionId }, query, options);
  }
  /** Sends a message and waits for the assistant's reply. */
  create(sessionId: string, body: Body<"sendChatMessage">, options?: RequestOptions): Promise<Data<"sendChatMessage">> {
    return this.post(v1 + "/chat/sessions/{id}/messages", { id: sessionId }, body, options);
  }
  /**
   * Sends a message and streams the reply. A dropped connection is resumed by the same POST
   * with the same Idempotency-Key and Last-Event-ID: no second turn, no frame twice.
   */
  stream(sessionId: string, body: Body<"streamChatMessage">, options: RequestOptions = {}): Stream {
    const opts = { ...options, idempotencyKey: options.idempotencyKey ?? newKey() };
    const open = (last: number | null) =>
      this.core.send({
        method: "POST",
        template: v1 + "/chat/sessions/{id}/messages/stream",
        params: { id: sessionId },
        body,
        headers: last === null ? {} : { "Last-Event-ID": String(last) },
        options: opts,
        stream: true,
      });
    return new Stream(this.core, open, null, options.signal);
  }
}

/** Prompts: `client.prompts`. */
export class Prompts extends Crud<"listPrompts", "createPrompt", "getPrompt", "updatePrompt", "deletePrompt"> {
  /** A prompt's versions: `client.prompts.versions`. */
  readonly versions: PromptVersions;

  constructor(core: Core) {
    super(core, "/prompts");
    this.versions = new PromptVersions(core);
  }
  /** Renders a prompt with variables. */
  preview(id: string, body: Body<"previewPrompt">, options?: RequestOptions): Promise<Data<"previewPrompt">> {
    return this.post(v1 + "/prompts/{id}/preview", { id }, body, options);
  }
}

/** Credentials: `client.credentials` (values only ever come back masked). */
export class Credentials extends Crud<"listCredentials", "createCredential", "getCredential", "updateCredential", "deleteCredential"> {
  constructor(core: Core) {
    super(core, "/credentials");
  }
}

/** Data sources: `client.dataSources`. */
export class DataSources extends Crud<"listDataSources", "createDataSource", "getDataSource", "updateDataSource", "deleteDataSource"> {
  /** A data source's versions: `client.dataSources.versions`. */
  readonly versions: DataSourceVersions;

  constructor(core: Core) {
    super(core, "/data-sources");
    this.versions = new DataSourceVersions(core);
  }
  /** Runs a read-only query. */
  query(id: string, body: Body<"queryDataSource">, options?: RequestOptions): Promise<Data<"queryDataSource">> {
    return this.post(v1 + "/data-sources/{id}/query", { id }, body, options);
  }
}

/** Agent triggers: `client.triggers`. */
export class Triggers extends Crud<"listAgentTriggers", "createAgentTrigger", "getAgentTrigger", "updateAgentTrigger", "deleteAgentTrigger"> {
  constructor(core: Core) {
    super(core, "/agent-triggers");
  }
}

/** Traces: `client.traces`. */
export class Traces extends Resource {
  list(query?: QueryOf<"listTraces">, options?: RequestOptions): PageIterator<Item<"listTraces">> {
    return this.pages(v1 + "/traces", {}, query, options);
  }
  /** A trace with its spans. */
  retrieve(id: string, options?: RequestOptions): Promise<Data<"getTrace">> {
    return this.get(v1 + "/traces/{id}", { id }, undefined, options);
  }
  /** Counts, tokens, cost and latency percentiles per agent over a window. */
  summary(query?: QueryOf<"getTraceSummary">, options?: RequestOptions): Promise<Data<"getTraceSummary">> {
    return this.get(v1 + "/traces/summary", {}, query as Query, options);
  }
}

/** Scores: `client.scores`. */
export class Scores extends Editable<"listScores", "createScore", "getScore", "updateScore"> {
  constructor(core: Core) {
    super(core, "/scores");
  }
  /** How the newest judge score and the newest human score of each execution agree. */
  agreement(query: QueryOf<"scoreAgreement">, options?: RequestOptions): Promise<Data<"scoreAgreement">> {
    return this.get(v1 + "/scores/agreement", {}, query as Query, options);
  }
}

/** Score configs: `client.scoreConfigs`. */
export class ScoreConfigs extends Editable<"listScoreConfigs", "createScoreConfig", "getScoreConfig", "updateScoreConfig"> {
  constructor(core: Core) {
    super(core, "/score-configs");
  }
}

/** Assets: `client.assets`. */
export class Assets extends Resource {
  list(query?: QueryOf<"listAssets">, options?: RequestOptions): PageIterator<Item<"listAssets">> {
    return this.pages(v1 + "/assets", {}, query, options);
  }
  retrieve(id: string, options?: RequestOptions): Promise<Data<"getAsset">> {
    return this.get(v1 + "/assets/{id}", { id }, undefined, options);
  }
  delete(id: string, options?: RequestOptions): Promise<Data<"deleteAsset">> {
    return this.del(v1 + "/assets/{id}", { id }, options);
  }
  /** The asset's bytes. */
  async content(id: string, options?: RequestOptions): Promise<Blob> {
    const res = await this.core.send({ method: "GET", template: v1 + "/assets/{id}/content", params: { id }, options });
    return res.blob();
  }
}

/** API keys: `client.apiKeys` (a key's secret is returned once, by create and rotate). */
export class APIKeys extends Resource {
  list(query?: QueryOf<"listAPIKeys">, options?: RequestOptions): PageIterator<Item<"listAPIKeys">> {
    return this.pages(v1 + "/api-keys", {}, query, options);
  }
  create(body: Body<"createAPIKey">, options?: RequestOptions): Promise<Data<"createAPIKey">> {
    return this.post(v1 + "/api-keys", {}, body, options);
  }
  retrieve(id: string, options?: RequestOptions): Promise<Data<"getAPIKey">> {
    return this.get(v1 + "/api-keys/{id}", { id }, undefined, options);
  }
  delete(id: string, options?: RequestOptions): Promise<Data<"revokeAPIKey">> {
    return this.del(v1 + "/api-keys/{id}", { id }, options);
  }
  rotate(id: string, options?: RequestOptions): Promise<Data<"rotateAPIKey">> {
    return this.post(v1 + "/api-keys/{id}/rotate", { id }, undefined, options);
  }
}

/** A prompt's versions. */
export class PromptVersions extends Versions<"listPromptVersions", "createPromptVersion", "getPromptVersion", "promotePromptVersion"> {
  constructor(core: Core) {
    super(core, "/prompts");
  }
}

/** A data source's versions. */
export class DataSourceVersions extends Versions<
  "listDataSourceVersions",
  "createDataSourceVersion",
  "getDataSourceVersion",
  "promoteDataSourceVersion"
> {
  constructor(core: Core) {
    super(core, "/data-sources");
  }
}

/** The model catalog: `client.llmModels` (built-ins are read-only). */
export class LLMModels extends Crud<"listLLMModels", "createLLMModel", "getLLMModel", "updateLLMModel", "deleteLLMModel"> {
  constructor(core: Core) {
    super(core, "/llm-models");
  }
}

/** MCP tool servers: `client.mcpTools`. */
export class MCPTools extends Crud<"listMCPTools", "createMCPTool", "getMCPTool", "updateMCPTool", "deleteMCPTool"> {
  constructor(core: Core) {
    super(core, "/mcp-tools");
  }
  /** Lists the server's tools again. */
  refresh(id: string, options?: RequestOptions): Promise<Data<"refreshMCPTool">> {
    return this.post(v1 + "/mcp-tools/{id}/refresh", { id }, undefined, options);
  }
}

/** Guardrails: `client.guardrails`. */
export class Guardrails extends Crud<"listGuardrails", "createGuardrail", "getGuardrail", "updateGuardrail", "deleteGuardrail"> {
  constructor(core: Core) {
    super(core, "/guardrails");
  }
  /** Runs the guardrail on a text. */
  test(id: string, body: Body<"testGuardrail">, options?: RequestOptions): Promise<Data<"testGuardrail">> {
    return this.post(v1 + "/guardrails/{id}/test", { id }, body, options);
  }
}

/** Memories: `client.memories`. */
export class Memories extends Crud<"listMemories", "createMemory", "getMemory", "updateMemory", "deleteMemory"> {
  constructor(core: Core) {
    super(core, "/memories");
  }
}

/** The approval inbox: `client.approvals` (decide with executions.approve and deny). */
export class Approvals extends Resource {
  list(query?: QueryOf<"listApprovals">, options?: RequestOptions): PageIterator<Item<"listApprovals">> {
    return this.pages(v1 + "/approvals", {}, query, options);
  }
  retrieve(id: string, options?: RequestOptions): Promise<Data<"getApproval">> {
    return this.get(v1 + "/approvals/{id}", { id }, undefined, options);
  }
}

/** Datasets: `client.datasets`, their items at `client.datasets.items`. */
export class Datasets extends Crud<"listDatasets", "createDataset", "getDataset", "updateDataset", "deleteDataset"> {
  /** A dataset's items: `client.datasets.items`. */
  readonly items: DatasetItems;

  constructor(core: Core) {
    super(core, "/datasets");
    this.items = new DatasetItems(core);
  }
}

/** The items of a dataset: `client.datasets.items`. */
export class DatasetItems extends Resource {
  list(datasetId: string, query?: QueryOf<"listDatasetItems">, options?: RequestOptions): PageIterator<Item<"listDatasetItems">> {
    return this.pages(v1 + "/datasets/{id}/items", { id: datasetId }, query, options);
  }
  /** Adds one item, or a batch ({ items: [...] }, all or none). */
  create(datasetId: string, body: Body<"createDatasetItems">, options?: RequestOptions): Promise<Data<"createDatasetItems">> {
    return this.post(v1 + "/datasets/{id}/items", { id: datasetId }, body, options);
  }
  retrieve(datasetId: string, itemId: string, options?: RequestOptions): Promise<Data<"getDatasetItem">> {
    return this.get(v1 + "/datasets/{id}/items/{item_id}", { id: datasetId, item_id: itemId }, undefined, options);
  }
  update(datasetId: string, itemId: string, body: Body<"updateDatasetItem">, options?: RequestOptions): Promise<Data<"updateDatasetItem">> {
    return this.patch(v1 + "/datasets/{id}/items/{item_id}", { id: datasetId, item_id: itemId }, body, options);
  }
  delete(datasetId: string, itemId: string, options?: RequestOptions): Promise<Data<"deleteDatasetItem">> {
    return this.del(v1 + "/datasets/{id}/items/{item_id}", { id: datasetId, item_id: itemId }, options);
  }
}

/** Evaluators: `client.evaluators`. */
export class Evaluators extends Crud<"listEvaluators", "createEvaluator", "getEvaluator", "updateEvaluator", "deleteEvaluator"> {
  constructor(core: Core) {
    super(core, "/evaluators");
  }
  /** Scores an output with the evaluator, recording nothing. */
  test(id: string, body: Body<"testEvaluator">, options?: RequestOptions): Promise<Data<"testEvaluator">> {
    return this.post(v1 + "/evaluators/{id}/test", { id }, body, options);
  }
}

/** Annotation queues: `client.annotationQueues` (human review of executions). */
export class AnnotationQueues extends Crud<
  "listAnnotationQueues",
  "createAnnotationQueue",
  "getAnnotationQueue",
  "updateAnnotationQueue",
  "deleteAnnotationQueue"
> {
  constructor(core: Core) {
    super(core, "/annotation-queues");
  }
  /** The queue's items, newest first (filter with status). */
  items(queueId: string, query?: QueryOf<"listAnnotationItems">, options?: RequestOptions): PageIterator<Item<"listAnnotationItems">> {
    return this.pages(v1 + "/annotation-queues/{id}/items", { id: queueId }, query, options);
  }
  /** Adds executions to the queue, all or none. */
  addItems(queueId: string, body: Body<"addAnnotationItems">, options?: RequestOptions): Promise<Data<"addAnnotationItems">> {
    return this.post(v1 + "/annotation-queues/{id}/items", { id: queueId }, body, options);
  }
  /** Claims the next item to review (the one already held comes back first). */
  next(queueId: string, options?: RequestOptions): Promise<Data<"claimNextAnnotationItem">> {
    return this.post(v1 + "/annotation-queues/{id}/next", { id: queueId }, undefined, options);
  }
  /** Writes the review's scores and marks the item completed. */
  complete(queueId: string, itemId: string, body: Body<"completeAnnotationItem">, options?: RequestOptions): Promise<Data<"completeAnnotationItem">> {
    return this.post(v1 + "/annotation-queues/{id}/items/{item_id}/complete", { id: queueId, item_id: itemId }, body, options);
  }
}

/**
 * The OpenAI-compatible endpoint: `client.openai` (an agent's id or name is the model). Its
 * answers are OpenAI's shapes, without the envelope; OpenAI's own clients work too, with
 * `baseURL` set to the server's `/api/v1/openai`.
 */
export class OpenAI extends Resource {
  /** Runs an agent as a chat completion (without stream). */
  async chatCompletions(body: Body<"openaiChatCompletions">, options?: RequestOptions): Promise<Plain<"openaiChatCompletions">> {
    return this.plain("POST", "/openai/chat/completions", body, options);
  }
  /** Runs an agent as a response (without stream). */
  async responses(body: Body<"openaiResponses">, options?: RequestOptions): Promise<Plain<"openaiResponses">> {
    return this.plain("POST", "/openai/responses", body, options);
  }
  /** The agents callable as models. */
  async models(options?: RequestOptions): Promise<Plain<"openaiListModels">> {
    return this.plain("GET", "/openai/models", undefined, options);
  }
  private async plain<T>(method: "GET" | "POST", path: string, body: unknown, options?: RequestOptions): Promise<T> {
    const res = await this.core.send({ method, template: v1 + path, params: {}, body, options });
    return (await res.json()) as T;
  }
}

export type { Page };
