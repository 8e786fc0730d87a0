import { APIConnectionError, APIError, AgentplaneError, errorFor, retryAfterSeconds } from "./errors.js";
import { idempotentPosts } from "./operations.js";
import type { components } from "./schema.js";

/** Options of a client; every one has a default. */
export interface ClientOptions {
  /** Where the API is (without /api/v1); default env AGENTPLANE_URL, else http://127.0.0.1:8080. */
  baseURL?: string;
  /** Sent as X-API-Key; default env AGENTPLANE_API_KEY. The emulator takes any key, or none. */
  apiKey?: string;
  /** Sent as X-Workspace-ID (with a bearer token); an API key names its own workspace. */
  workspace?: string;
  /** Retries of 429, 5xx and connection errors (and of a dropped stream without progress); default 2. */
  maxRetries?: number;
  /** The longest wait between two tries, in milliseconds; default 8000. */
  maxRetryDelayMs?: number;
  /** A request's time limit in milliseconds (streams excepted); default 600000. */
  timeoutMs?: number;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/** Per-call options. */
export interface RequestOptions {
  /** Cancels the request (or the stream). */
  signal?: AbortSignal;
  /** The Idempotency-Key of a creating POST; default a new random one per call, kept across its retries. */
  idempotencyKey?: string;
  /** Extra headers. */
  headers?: Record<string, string>;
}

/** Query parameters; undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined | null>;

/** The pagination block of a list answer. */
export type Pagination = components["schemas"]["Pagination"];

/** One page of a list. */
export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

interface Call {
  method: string;
  /** The route's path template, e.g. /api/v1/agents/{id}. */
  template: string;
  params?: Record<string, string>;
  query?: Query;
  body?: unknown;
  options?: RequestOptions;
  /** Extra headers set by the SDK (Last-Event-ID). */
  headers?: Record<string, string>;
  /** A stream: no time limit, an event-stream Accept. */
  stream?: boolean;
}

const retryStatuses = new Set([429, 500, 502, 503, 504]);

function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env?.[name] || undefined;
}

/**
 * newKey makes an Idempotency-Key: a random UUID. randomUUID exists only in secure contexts
 * (https, localhost); a page served over plain http gets one from getRandomValues.
 */
export function newKey(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === "function") return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** sleep waits ms, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    const t = setTimeout(done, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The transport every resource shares: URLs, headers, errors, retries and pages. */
export class Core {
  readonly baseURL: string;
  readonly maxRetries: number;
  private readonly apiKey: string | undefined;
  private readonly workspace: string | undefined;
  private readonly maxRetryDelayMs: number;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(opts: ClientOptions = {}) {
    this.baseURL = (opts.baseURL ?? env("AGENTPLANE_URL") ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
    this.apiKey = opts.apiKey ?? env("AGENTPLANE_API_KEY");
    this.workspace = opts.workspace;
    this.maxRetries = opts.maxRetries ?? 2;
    this.maxRetryDelayMs = opts.maxRetryDelayMs ?? 8000;
    this.timeoutMs = opts.timeoutMs ?? 600_000;
    const f = opts.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new AgentplaneError("no fetch: pass options.fetch (Node 18 and browsers have one)");
    this.fetchFn = f.bind(globalThis);
  }

  /** url fills a path template and appends the query. */
  url(template: string, params: Record<string, string> = {}, query?: Query): string {
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const v = params[name];
      if (v === undefined || v === "") throw new AgentplaneError(`${name} is required`);
      return encodeURIComponent(v);
    });
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined && v !== null) qs.set(k, String(v));
    }
    const s = qs.toString();
    return this.baseURL + path + (s ? "?" + s : "");
  }

  /** delay is the wait before try number attempt+1: Retry-After when sent, else exponential with jitter. */
  delay(attempt: number, headers?: Headers): number {
    const after = headers ? retryAfterSeconds(headers) : null;
    const ms = after !== null ? after * 1000 : 250 * 2 ** attempt * (0.75 + Math.random() * 0.5);
    return Math.min(ms, this.maxRetryDelayMs);
  }

  /**
   * send makes a call, retrying what is safe to retry: a 429 always; 5xx and connection errors
   * for GETs and for POSTs that honour Idempotency-Key (sent with one, the same on every try).
   */
  async send(call: Call): Promise<Response> {
    const { method, options = {} } = call;
    const idempotent = method === "POST" && idempotentPosts.has(call.template);
    const headers: Record<string, string> = { Accept: call.stream ? "text/event-stream" : "application/json" };
    if (this.apiKey) headers["X-API-Key"] = this.apiKey;
    if (this.workspace) headers["X-Workspace-ID"] = this.workspace;
    if (idempotent) headers["Idempotency-Key"] = options.idempotencyKey ?? newKey();
    if (call.body !== undefined) headers["Content-Type"] = "application/json";
    Object.assign(headers, call.headers, options.headers);
    const url = this.url(call.template, call.params, call.query);
    const safe = method === "GET" || idempotent;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      const signal = this.signal(options.signal, call.stream);
      try {
        res = await this.fetchFn(url, {
          method,
          headers,
          body: call.body === undefined ? undefined : JSON.stringify(call.body),
          signal,
        });
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (safe && attempt < this.maxRetries) {
          await sleep(this.delay(attempt), options.signal);
          continue;
        }
        throw new APIConnectionError(`${method} ${url}: ${(err as Error).message ?? err}`, { cause: err });
      }
      if (res.ok) return res;
      // A retry of an idempotent request still in progress is a 409 with Retry-After.
      const inProgress = idempotent && res.status === 409 && res.headers.has("retry-after");
      const retry = res.status === 429 || inProgress || (safe && retryStatuses.has(res.status));
      if (retry && attempt < this.maxRetries) {
        await res.body?.cancel();
        await sleep(this.delay(attempt, res.headers), options.signal);
        continue;
      }
      throw await errorOf(res);
    }
  }

  /** signal joins the caller's signal with the request time limit (none for streams). */
  private signal(user: AbortSignal | undefined, stream?: boolean): AbortSignal | undefined {
    if (stream) return user;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    if (!user) return timeout;
    const any = (AbortSignal as { any?: (s: AbortSignal[]) => AbortSignal }).any;
    return any ? any([user, timeout]) : user;
  }

  /** json makes a call and returns the envelope's data. */
  async json<T>(call: Call): Promise<T> {
    const res = await this.send(call);
    const env = (await res.json()) as { data: T };
    return env.data;
  }

  /** page makes a list call and returns one page. */
  async page<T>(call: Call): Promise<Page<T>> {
    const res = await this.send(call);
    return (await res.json()) as Page<T>;
  }

  /** list walks a whole list with next_cursor, one page at a time. */
  list<T>(call: Call): PageIterator<T> {
    return new PageIterator<T>(this, call);
  }
}

/** errorOf turns an error answer into its class, by status. */
async function errorOf(res: Response): Promise<APIError> {
  let code = "http_" + res.status;
  let message = res.statusText || "request failed";
  try {
    const env = (await res.json()) as { error?: unknown; message?: unknown };
    if (typeof env.error === "string") code = env.error;
    if (typeof env.message === "string" && env.message) message = env.message;
    // The OpenAI-compatible endpoint's error object: { error: { code, message } }.
    const inner = env.error as { code?: unknown; message?: unknown } | undefined;
    if (inner && typeof inner === "object" && typeof inner.code === "string") code = inner.code;
    if (inner && typeof inner === "object" && typeof inner.message === "string" && inner.message) message = inner.message;
  } catch {
    // not an envelope (a proxy's page): keep the status text
  }
  return errorFor(res.status, code, message, res.headers);
}

/**
 * A list as an async iterator over its items, following next_cursor from page to page:
 * `for await (const e of client.executions.list({ status: "failed" }))`.
 */
export class PageIterator<T> implements AsyncIterable<T> {
  constructor(
    private readonly core: Core,
    private readonly call: Call,
  ) {}

  /** The first page alone (its pagination has the total). */
  firstPage(): Promise<Page<T>> {
    return this.core.page<T>(this.call);
  }

  /** Every page in turn. */
  async *pages(): AsyncGenerator<Page<T>> {
    let call = this.call;
    for (;;) {
      const page = await this.core.page<T>(call);
      yield page;
      const next = page.pagination.next_cursor;
      if (!next || page.data.length === 0) return;
      const { page: _page, ...query } = call.query ?? {};
      call = { ...call, query: { ...query, cursor: next } };
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item, read into an array. */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
