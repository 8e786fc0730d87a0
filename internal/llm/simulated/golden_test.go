package simulated

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/agentplane/agentplane/internal/llm"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json from the current answers")

// goldenRequests are sampleRequests with more inputs: other languages and shapes of text,
// and tool results of every kind the replies describe.
func goldenRequests() map[string]llm.Request {
	reqs := sampleRequests()
	texts := map[string]string{
		"question":  "Can you compare PostgreSQL and MySQL for a small analytics team?",
		"command":   "Summarise the quarterly report for the board, focusing on revenue and churn.",
		"unicode":   "Quelle est la meilleure saison pour visiter Kyōto — printemps ou automne?",
		"names":     "Tell John Smith at Acme Corp that the Q3 invoice #4521 is overdue.",
		"long":      "I have a Go service with a memory leak. It runs on Kubernetes, uses pgx for PostgreSQL, and the heap grows by 50 MB an hour. Where should I start looking, and which tools help?",
		"apostroph": "Don’t worry, what’s the ETA for order 1234?",
	}
	for name, text := range texts {
		reqs["text/"+name] = llm.Request{Messages: []llm.Message{user(text)}}
		reqs["tools/"+name] = llm.Request{Messages: []llm.Message{user(text)}, Tools: allTools}
	}
	results := []string{
		`{"results":[{"title":"A \"quoted\" title","url":"u"},{"title":"B"}]}`,
		`{"columns":["id"],"rows":[[1],[2],[3]],"row_count":3}`,
		`{"forecast":[{"summary":"Sunny"}]}`, `[1,2,3,4]`, `{"items":[]}`, `{"ok":true,"id":"issue_1"}`,
		`{"ok":true}`, `{"error":"not found"}`, `{"error":{"code":404,"message":"no such file"}}`, `{"ok":false}`,
		`{"path":"a.md","content":"# Title"}`, "plain text\n\nresult with   spaces", "", `{"broken":`,
		`{"data":{"entries":[{"name":"x"},{"name":"y"}],"total":2}}`, `{"is_error":true,"content":"denied"}`,
		`{"success":false,"message":"quota"}`, `{"matches":[],"query":"q"}`, "Error: timeout after 30s",
	}
	for i, content := range results {
		reqs[fmt.Sprintf("result/%02d", i)] = llm.Request{Tools: allTools, Messages: []llm.Message{user("Find what you can about Lisbon"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "web_search", Arguments: json.RawMessage(`{"query":"Lisbon"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: content}}}
	}
	return reqs
}

// TestGolden: the answers to goldenRequests are those of testdata/golden.json, so that a
// change of the provider's code changes no answer unless it means to (run with -update).
func TestGolden(t *testing.T) {
	got := map[string]any{}
	p := New()
	for name, req := range goldenRequests() {
		r := complete(t, p, req)
		got[name] = map[string]any{"response": r.resp, "error": fmt.Sprint(r.err), "events": len(r.events)}
	}
	tools := map[string]string{}
	for _, name := range []string{"web_search", "get_weather", "read_file", "send_email", "list_orders", "create_ticket", "query_db"} {
		for _, spec := range allTools {
			call := llm.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(`{"query":"seafood in Lisbon","city":"Lisbon","path":"notes/todo.md","to":"a@b.c","subject":"Hi"}`)}
			tools[name+"/"+spec.Name] = SimulateTool(call, spec)
		}
	}
	got["tools"] = tools
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const file = "testdata/golden.json"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		var w map[string]json.RawMessage
		_ = json.Unmarshal(want, &w)
		var g map[string]json.RawMessage
		_ = json.Unmarshal(b, &g)
		names := make([]string, 0, len(g))
		for n := range g {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !bytes.Equal(g[n], w[n]) {
				t.Errorf("%s:\n got %s\nwant %s", n, g[n], w[n])
			}
		}
	}
}
