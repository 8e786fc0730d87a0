// The SDK against a live emulator (started by `go test ./sdks/`, which sets AGENTPLANE_URL
// and the chaos proxy's AGENTPLANE_TEST_DROP_URL and AGENTPLANE_TEST_FLAKY_URL).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Agentplane, NotFoundError, RateLimitError, ValidationError, APIConnectionError } from "../dist/index.js";

const url = process.env.AGENTPLANE_URL;
if (!url) throw new Error("AGENTPLANE_URL is not set: run these tests with `go test -run TestTypeScriptSDK ./sdks/`");
const client = new Agentplane(); // from the environment
const dropped = new Agentplane({ baseURL: process.env.AGENTPLANE_TEST_DROP_URL, maxRetries: 2, maxRetryDelayMs: 50 });
const flaky = new Agentplane({ baseURL: process.env.AGENTPLANE_TEST_FLAKY_URL, maxRetries: 2, maxRetryDelayMs: 50 });

/** The emulator is seeded; serve starts empty, so the suite makes what it needs there. */
const seeded = process.env.AGENTPLANE_TEST_TARGET !== "serve";

let n = 0;
async function agent(config = {}) {
  return client.agents.create({ name: `ts sdk ${process.pid} ${++n}`, type: "simple", config: { model: "gpt-4o-mini", ...config } });
}

/** The frames' ids are strictly increasing and the last frame is terminal. */
function assertWhole(events) {
  assert.ok(events.length > 0, "no events");
  for (let i = 1; i < events.length; i++) assert.ok(events[i].id > events[i - 1].id, `frame ${events[i].id} after ${events[i - 1].id}`);
  assert.ok(["done", "error"].includes(events.at(-1).event), `last event ${events.at(-1).event}`);
}

test("lists follow next_cursor through every page", async () => {
  if (!seeded) for (let i = 0; i < 3; i++) await agent();
  const first = await client.agents.list({ limit: 2 }).firstPage();
  assert.equal(first.data.length, 2);
  const all = await client.agents.list({ limit: 2 }).toArray();
  assert.equal(all.length, first.pagination.total);
  assert.equal(new Set(all.map((a) => a.id)).size, all.length, "an agent came twice");
});

test("an agent runs and its failures are listed", async () => {
  const faq = seeded ? (await client.agents.list({ type: "simple", q: "FAQ" }).toArray())[0] : await agent();
  const ok = await client.agents.execute(faq.id, { input: { question: "How do I reset my password?" } });
  assert.equal(ok.status, "completed");
  assert.equal((await client.executions.retrieve(ok.id)).id, ok.id);

  const broken = await agent({ simulation: { fail: true, fail_message: "the model fell over" } });
  const bad = await client.agents.execute(broken.id, { input: { message: "hi" } });
  assert.equal(bad.status, "failed");
  const failed = [];
  for await (const e of client.executions.list({ status: "failed", agent_id: broken.id })) failed.push(e);
  assert.deepEqual(failed.map((e) => e.id), [bad.id]);
  assert.match(failed[0].error ?? "", /fell over/);
});

test("errors are classes by status and code", async () => {
  await assert.rejects(client.agents.retrieve("2rfFt6qa0UQfFHDSW7MvKn0cfDx"), (err) => {
    assert.ok(err instanceof NotFoundError);
    assert.equal(err.status, 404);
    assert.equal(err.code, "not_found");
    assert.ok(err.requestId);
    return true;
  });
  await assert.rejects(client.agents.create({ name: "", type: "simple" }), ValidationError);
  const noRetry = new Agentplane({ baseURL: process.env.AGENTPLANE_TEST_FLAKY_URL, maxRetries: 0 });
  await assert.rejects(noRetry.agents.list({ q: "no retry" }).firstPage(), (err) => {
    assert.ok(err instanceof RateLimitError);
    assert.equal(err.retryAfter, 0);
    return true;
  });
  const closed = new Agentplane({ baseURL: "http://127.0.0.1:1", maxRetries: 1, maxRetryDelayMs: 10 });
  await assert.rejects(closed.agents.list().firstPage(), APIConnectionError);
});

test("429 is retried, and a POST whose answer was lost is retried with its Idempotency-Key", async () => {
  const name = `ts idempotent ${process.pid}`;
  // The proxy lets the first try create the agent, then loses its answer: the retry replays it.
  const created = await flaky.agents.create({ name, type: "simple", config: { model: "gpt-4o-mini" } });
  const same = await flaky.agents.list({ q: name }).toArray(); // each page answered 429 first
  assert.deepEqual(same.map((a) => a.id), [created.id]);
});

test("an execution stream resumes after dropped connections, with no frame twice and none missed", async () => {
  const slow = await agent({ simulation: { latency_ms: 20 } });
  const run = await client.agents.execute(slow.id, { input: { message: "tell me a long story" }, async: true });
  const stream = dropped.executions.stream(run.id);
  const events = await stream.toArray();
  assertWhole(events);
  assert.ok(stream.reconnects > 0, "the proxy never cut the stream");
  const direct = await client.executions.stream(run.id).toArray();
  assert.deepEqual(events, direct);
  assert.equal(events.at(-1).event, "done");
});

test("a chat stream resumes by the same turn, not a second one", async () => {
  const chatAgent = await agent({ simulation: { latency_ms: 10 } });
  const session = await client.chat.sessions.create({ agent_id: chatAgent.id, title: "sdk" });
  const stream = dropped.chat.sessions.messages.stream(session.id, { content: "Hello, stream!" });
  const events = await stream.toArray();
  assert.equal(events[0].event, "execution");
  assertWhole(events);
  assert.ok(stream.reconnects > 0, "the proxy never cut the stream");
  const text = events.filter((e) => e.event === "content").map((e) => e.data.content).join("");
  const messages = await client.chat.sessions.messages.list(session.id).toArray();
  assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"]);
  assert.equal(messages[1].content, text);
});

test("an AbortSignal ends a stream and leaves the run going", async () => {
  const slow = await agent({ simulation: { latency_ms: 200 } });
  const run = await client.agents.execute(slow.id, { input: { message: "a slow one" }, async: true });
  const ctl = new AbortController();
  const seen = [];
  await assert.rejects(
    (async () => {
      for await (const ev of client.executions.stream(run.id, { signal: ctl.signal })) {
        seen.push(ev);
        ctl.abort();
      }
    })(),
    (err) => err.name === "AbortError",
  );
  assert.equal(seen.length, 1);
  const after = await client.executions.retrieve(run.id);
  assert.notEqual(after.status, "cancelled");
  await client.executions.cancel(run.id).catch(() => undefined); // end it for the next test
});

test("every resource answers through its client property", async () => {
  for (const name of ["llmModels", "mcpTools", "guardrails", "memories", "approvals", "scoreConfigs", "credentials", "dataSources", "triggers", "traces", "scores", "assets", "prompts", "datasets", "evaluators", "annotationQueues"]) {
    const page = await client[name].list({ limit: 5 }).firstPage();
    assert.ok(Array.isArray(page.data), name);
    assert.equal(typeof page.pagination.total, "number", name);
  }
  if (!seeded) return; // what follows reads the seed
  assert.equal((await client.llmModels.list({ limit: 100 }).toArray()).length, 42); // the seed's catalog
  const prompt = (await client.prompts.list().firstPage()).data[0];
  const versions = await client.prompts.versions.list(prompt.id).toArray();
  assert.ok(versions.length >= 1);
  assert.equal((await client.prompts.versions.retrieve(prompt.id, versions[0].id)).id, versions[0].id);
  const source = (await client.dataSources.list().firstPage()).data[0];
  assert.ok((await client.dataSources.versions.list(source.id).toArray()).length >= 1);
  assert.equal(typeof (await client.traces.summary()), "object");
});

test("Idempotency-Keys are made without crypto.randomUUID too (pages served over plain http)", async () => {
  const { newKey } = await import("../dist/core.js");
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const saved = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(globalThis.crypto), "randomUUID");
  Object.defineProperty(globalThis.crypto, "randomUUID", { value: undefined, configurable: true });
  try {
    const keys = new Set([newKey(), newKey()]);
    assert.equal(keys.size, 2);
    for (const k of keys) assert.match(k, uuid);
  } finally {
    delete globalThis.crypto.randomUUID;
    assert.equal(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(globalThis.crypto), "randomUUID")?.value, saved?.value);
  }
  assert.match(newKey(), uuid);
});

test("datasets, evaluators and annotation queues", async () => {
  const ds = await client.datasets.create({ name: `ts sdk set ${process.pid}` });
  const batch = await client.datasets.items.create(ds.id, { items: [{ input: { q: "a" }, expected_output: "A" }, { input: { q: "b" } }] });
  assert.equal(batch.count, 2);
  const items = await client.datasets.items.list(ds.id, { limit: 1 }).toArray();
  assert.equal(items.length, 2);
  assert.equal((await client.datasets.items.retrieve(ds.id, items[0].id)).id, items[0].id);

  const ev = await client.evaluators.create({ name: `ts sdk has-hi ${process.pid}`, type: "contains", config: { value: "hi" } });
  assert.equal((await client.evaluators.test(ev.id, { output: "oh hi" })).value, 1);
  assert.equal((await client.evaluators.test(ev.id, { output: "bye" })).value, 0);

  const a = await agent();
  const x = await client.agents.execute(a.id, { input: { message: "hi" } });
  const cfg = await client.scoreConfigs.create({ name: `ts sdk good ${process.pid}`, data_type: "boolean" });
  const q = await client.annotationQueues.create({ name: `ts sdk review ${process.pid}`, score_config_ids: [cfg.id] });
  await client.annotationQueues.addItems(q.id, { execution_ids: [x.id] });
  const claim = await client.annotationQueues.next(q.id);
  assert.equal(claim.item?.execution_id, x.id);
  const done = await client.annotationQueues.complete(q.id, claim.item.id, { scores: [{ config_id: cfg.id, value: 1 }] });
  assert.equal(done.scores.length, 1);
  await client.scores.create({ execution_id: x.id, name: `ts sdk judge ${process.pid}`, data_type: "boolean", value: 1 });
  const agree = await client.scores.agreement({ judge: `ts sdk judge ${process.pid}`, human: cfg.name });
  assert.equal(agree.count, 1);
  assert.equal(agree.exact_agreement, 1);
});

test("the OpenAI-compatible endpoint runs an agent", async () => {
  const a = await agent();
  const models = await client.openai.models();
  assert.ok(models.data.some((m) => m.id === a.id || m.id === a.name), "the agent is not listed as a model");
  const out = await client.openai.chatCompletions({ model: a.id, messages: [{ role: "user", content: "Hello" }] });
  assert.equal(out.choices.length, 1);
  assert.ok(out.choices[0].message.content);
  await assert.rejects(client.openai.chatCompletions({ model: "no-such-agent", messages: [{ role: "user", content: "Hi" }] }), (e) => {
    assert.ok(e instanceof NotFoundError);
    assert.doesNotMatch(e.code, /^http_/);
    return true;
  });
});
