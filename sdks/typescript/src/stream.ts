import type { Core } from "./core.js";
import { sleep } from "./core.js";
import { StreamError } from "./errors.js";
import type { components } from "./schema.js";

/**
 * One frame of an execution or chat stream (generated from the document): its per-execution
 * sequence number `id`, its `event` name and the typed `data` of that event.
 */
export type StreamEvent = components["schemas"]["ChatStreamFrame"];

/** The data of each event, by event name. */
export type StreamEventData = { [E in StreamEvent["event"]]: Extract<StreamEvent, { event: E }>["data"] };

/** opener opens the stream again; lastEventId is the last frame seen (null: none yet). */
export type Opener = (lastEventId: number | null) => Promise<Response>;

/**
 * A stream as an async iterator of typed events. A connection that drops before the terminal
 * frame is opened again with Last-Event-ID, so every frame comes once and none is missed;
 * aborting the signal ends it (the run goes on).
 */
export class Stream implements AsyncIterable<StreamEvent> {
  private lastId: number | null;
  private reopened = 0;

  constructor(
    private readonly core: Core,
    private readonly open: Opener,
    lastEventId: number | null,
    private readonly signal?: AbortSignal,
  ) {
    this.lastId = lastEventId;
  }

  /** The id of the last frame read (null before the first). */
  get lastEventId(): number | null {
    return this.lastId;
  }

  /** How many times a dropped connection was opened again. */
  get reconnects(): number {
    return this.reopened;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamEvent> {
    let failures = 0;
    for (;;) {
      const res = await this.open(this.lastId);
      if (res.status === 204) return; // resumed at or past the terminal frame
      let progressed = false;
      try {
        for await (const ev of frames(res, this.signal)) {
          if (this.signal?.aborted) break; // frames already read are not handed out after an abort
          if (this.lastId !== null && ev.id <= this.lastId) continue; // a frame already yielded
          this.lastId = ev.id;
          progressed = true;
          yield ev;
          if (ev.event === "done" || ev.event === "error") return;
        }
      } catch (err) {
        if (this.signal?.aborted) throw this.signal.reason;
        void err; // a dropped connection: resume below
      }
      if (this.signal?.aborted) throw this.signal.reason;
      failures = progressed ? 0 : failures + 1;
      if (failures > this.core.maxRetries) {
        throw new StreamError(`the stream ended before its terminal frame (after frame ${this.lastId ?? "none"}) and could not be resumed`);
      }
      await sleep(progressed ? 0 : this.core.delay(failures - 1), this.signal);
      this.reopened++;
    }
  }

  /** Every event up to the terminal one. */
  async toArray(): Promise<StreamEvent[]> {
    const out: StreamEvent[] = [];
    for await (const ev of this) out.push(ev);
    return out;
  }
}

/** frames parses a text/event-stream body into events (comments and unnamed frames skipped). */
async function* frames(res: Response, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let buf = "";
  let id = "";
  let event = "";
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          if (event && data.length) {
            yield { id: Number(id), event, data: JSON.parse(data.join("\n")) } as StreamEvent;
          }
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "id") id = value;
        else if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => undefined);
  }
}
