// The official OpenAI SDK and the Vercel AI SDK against agentplane's OpenAI-compatible API.
// Run by TestOpenAIClients with AP_BASE (…/api/v1/openai), AP_KEY and AP_MODEL (an agent
// name); prints "ok" when every check passed, else throws.
import OpenAI from "openai";
import { generateText, streamText } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";

const base = process.env.AP_BASE, apiKey = process.env.AP_KEY, model = process.env.AP_MODEL;
const check = (ok, what) => { if (!ok) throw new Error("check failed: " + what); };
const client = new OpenAI({ baseURL: base, apiKey, maxRetries: 0 });
const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello there" }];

// Chat completions, plain and streamed with usage.
const c = await client.chat.completions.create({ model, messages, user: "npm-user" });
check(c.object === "chat.completion" && c.id.startsWith("chatcmpl-"), "completion id " + c.id);
check(c.choices[0].message.content.length > 0 && c.usage.total_tokens > 0, "completion " + JSON.stringify(c));
const stream = await client.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
let text = "", usage = null, chunks = 0;
for await (const chunk of stream) {
  chunks++;
  text += chunk.choices[0]?.delta?.content ?? "";
  if (chunk.usage) usage = chunk.usage;
}
check(chunks > 2 && text.length > 0 && usage && usage.total_tokens > 0, `stream: ${chunks} chunks, ${JSON.stringify(text)}, ${JSON.stringify(usage)}`);

// Responses, continued with previous_response_id, and streamed.
const r1 = await client.responses.create({ model, input: "My name is Ada.", instructions: "Be brief." });
check(r1.id.startsWith("resp_") && r1.output_text.length > 0, "response " + JSON.stringify(r1));
const r2 = await client.responses.create({ model, input: "What is my name?", previous_response_id: r1.id });
check(r2.previous_response_id === r1.id && r2.output_text.length > 0, "second response " + JSON.stringify(r2));
const rs = await client.responses.create({ model, input: "Hi", stream: true });
const types = [];
for await (const ev of rs) types.push(ev.type);
check(types[0] === "response.created" && types.includes("response.output_text.delta") && types.at(-1) === "response.completed", "events " + types);

// An error raised as the SDK's typed class.
try {
  await client.chat.completions.create({ model: "no-such-agent", messages });
  check(false, "an unknown model did not fail");
} catch (e) {
  check(e instanceof OpenAI.NotFoundError && e.status === 404, "error " + e);
}
try {
  await client.chat.completions.create({ model, messages: [] });
  check(false, "no messages did not fail");
} catch (e) {
  check(e instanceof OpenAI.UnprocessableEntityError && e.code === "validation_error", "error " + e);
}

// The Vercel AI SDK through @ai-sdk/openai-compatible.
const provider = createOpenAICompatible({ name: "agentplane", baseURL: base, apiKey, includeUsage: true });
const g = await generateText({ model: provider(model), prompt: "Hello there", maxRetries: 0 });
check(g.text.length > 0 && g.usage.totalTokens > 0, "generateText " + JSON.stringify({ text: g.text, usage: g.usage }));
const st = streamText({ model: provider(model), prompt: "Hello there", maxRetries: 0, onError: ({ error }) => { throw error; } });
let streamed = "";
for await (const delta of st.textStream) streamed += delta;
const su = await st.usage;
check(streamed.length > 0 && su.totalTokens > 0, "streamText " + JSON.stringify({ streamed, su }));
console.log("ok");
