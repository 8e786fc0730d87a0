// The MCP TypeScript SDK's client against agentplane's MCP server. Run by TestMCPClient with
// AP_MCP (…/api/v1/mcp) and AP_KEY; prints "ok" when every check passed, else throws.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const check = (ok, what) => { if (!ok) throw new Error("check failed: " + what); };
const transport = new StreamableHTTPClientTransport(new URL(process.env.AP_MCP), {
  requestInit: { headers: { "X-API-Key": process.env.AP_KEY } },
});
const client = new Client({ name: "contract", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const helper = tools.find((t) => t.name === "Helper");
check(helper && helper.inputSchema.type === "object" && helper.inputSchema.properties.message, "tools " + JSON.stringify(tools));

let progress = 0;
const res = await client.callTool({ name: "Helper", arguments: { message: "Hello there" } }, undefined, { onprogress: () => progress++ });
check(!res.isError && res.content[0].type === "text" && res.content[0].text.length > 0, "call " + JSON.stringify(res));
check(progress > 0, "no progress notification");

const bad = await client.callTool({ name: "Helper", arguments: {} });
check(bad.isError, "a call without its message did not fail: " + JSON.stringify(bad));

const { prompts } = await client.listPrompts();
check(prompts.length === 1 && prompts[0].arguments[0].name === "name", "prompts " + JSON.stringify(prompts));
const p = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
check(p.messages[0].content.text === "Say hello to Ada.", "prompt " + JSON.stringify(p));
await client.close();
console.log("ok");
