// A small client of the API through openapi-fetch, type-checked (never run) by
// TestTypeScriptClientCompiles against the types openapi-typescript generates from each
// served document: paths, parameters, bodies, enums, nullable fields and SSE frames.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Execution = components["schemas"]["Execution"];
type ExecutionStatus = Execution["status"];

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8080" });

type KnownStatus = "pending" | "running" | "completed" | "failed" | "cancelled" | "awaiting_approval" | "rejected";

export async function run(agentId: string): Promise<KnownStatus | undefined> {
  const list = await client.GET("/api/v1/agents", { params: { query: { type: "chain", limit: 5 } } });
  const first = list.data?.data[0];
  if (first) {
    const tags: string[] = first.tags; // arrays are never null
    const kind: "simple" | "agent" | "chain" | "workflow" | "multi_agent" | "approval" = first.type;
    void tags; void kind;
  }
  const res = await client.POST("/api/v1/agents/{id}/execute", {
    params: { path: { id: agentId }, header: { "Idempotency-Key": "k1" } },
    body: { input: { message: "hi" }, async: true },
  });
  const status: ExecutionStatus | undefined = res.data?.data.status;
  const completed: string | null | undefined = res.data?.data.completed_at; // null until it ends
  void completed;
  return status;
}

export function frameText(f: components["schemas"]["ChatStreamFrame"]): string {
  switch (f.event) {
    case "content":
    case "thinking":
      return f.data.content;
    case "error":
      return f.data.message + (f.data.code ? ` (${f.data.code})` : "");
    case "done":
      return String(f.data.time);
    default:
      return "";
  }
}
