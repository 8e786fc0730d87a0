/**
 * The official TypeScript SDK of the agentplane API.
 *
 * ```ts
 * import { Agentplane } from "@agentplane/sdk";
 * const client = new Agentplane(); // AGENTPLANE_URL, AGENTPLANE_API_KEY
 * for await (const e of client.executions.list({ status: "failed" })) console.log(e.id, e.error);
 * ```
 */
import { Core, type ClientOptions } from "./core.js";
import {
  APIKeys,
  AnnotationQueues,
  Datasets,
  Evaluators,
  Agents,
  Approvals,
  Assets,
  Chat,
  Credentials,
  DataSources,
  Executions,
  Guardrails,
  LLMModels,
  MCPTools,
  Memories,
  OpenAI,
  Prompts,
  ScoreConfigs,
  Scores,
  Traces,
  Triggers,
} from "./resources.js";

/** A client of the agentplane API: one property per resource, named as the API names it. */
export class Agentplane {
  /** The transport the resources share (base URL, retries). */
  readonly core: Core;
  readonly agents: Agents;
  readonly prompts: Prompts;
  readonly executions: Executions;
  readonly chat: Chat;
  readonly traces: Traces;
  readonly scores: Scores;
  readonly credentials: Credentials;
  readonly dataSources: DataSources;
  readonly triggers: Triggers;
  readonly assets: Assets;
  readonly apiKeys: APIKeys;
  readonly approvals: Approvals;
  readonly scoreConfigs: ScoreConfigs;
  readonly llmModels: LLMModels;
  readonly mcpTools: MCPTools;
  readonly guardrails: Guardrails;
  readonly memories: Memories;
  readonly datasets: Datasets;
  readonly evaluators: Evaluators;
  readonly annotationQueues: AnnotationQueues;
  readonly openai: OpenAI;

  constructor(options: ClientOptions = {}) {
    const core = new Core(options);
    this.core = core;
    this.agents = new Agents(core);
    this.prompts = new Prompts(core);
    this.executions = new Executions(core);
    this.chat = new Chat(core);
    this.traces = new Traces(core);
    this.scores = new Scores(core);
    this.credentials = new Credentials(core);
    this.dataSources = new DataSources(core);
    this.triggers = new Triggers(core);
    this.assets = new Assets(core);
    this.apiKeys = new APIKeys(core);
    this.approvals = new Approvals(core);
    this.scoreConfigs = new ScoreConfigs(core);
    this.llmModels = new LLMModels(core);
    this.mcpTools = new MCPTools(core);
    this.guardrails = new Guardrails(core);
    this.memories = new Memories(core);
    this.datasets = new Datasets(core);
    this.evaluators = new Evaluators(core);
    this.annotationQueues = new AnnotationQueues(core);
    this.openai = new OpenAI(core);
  }
}

export default Agentplane;
export type { ClientOptions, Page, Pagination, Query, RequestOptions } from "./core.js";
export { Core, PageIterator } from "./core.js";
export * from "./errors.js";
export { Stream, type StreamEvent, type StreamEventData } from "./stream.js";
export type { Schema, StreamOptions } from "./resources.js";
export type { components, operations, paths } from "./schema.js";
