package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// scriptedModel is an OpenAI-protocol fake that behaves like a model using its tools:
//   - after a tool result, it answers "tool said: <result>";
//   - to "Remember: <fact>" it calls remember with the fact, when it was given that tool;
//   - to "SQL[<tool>]: <statement>" it calls that tool with the statement;
//   - to anything else it answers with its system message, so a test reads what the
//     prompt held (the memories put into it).
func scriptedModel(t *testing.T) *llmtest.Server {
	fake := llmtest.NewOpenAI()
	t.Cleanup(fake.Close)
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		msgs := items(req.Body["messages"])
		last := msgs[len(msgs)-1]
		if last["role"] == "tool" {
			return llmtest.Reply{Text: []string{"tool said: " + textOf(last["content"])}}
		}
		user := textOf(last["content"])
		if fact, ok := strings.CutPrefix(user, "Remember: "); ok && slices.Contains(toolNames(req), "remember") {
			args, _ := json.Marshal(map[string]string{"content": fact})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_mem", Name: "remember", Args: []string{string(args)}}}}
		}
		if rest, ok := strings.CutPrefix(user, "SQL["); ok {
			tool, stmt, _ := strings.Cut(rest, "]: ")
			args, _ := json.Marshal(map[string]any{"query": stmt, "params": []any{}})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_sql", Name: tool, Args: []string{string(args)}}}}
		}
		system := ""
		if msgs[0]["role"] == "system" {
			system = textOf(msgs[0]["content"])
		}
		return llmtest.Reply{Text: []string{"system: " + system}}
	}
	return fake
}

// toolNames are the names of the tools a request offered the model.
func toolNames(req llmtest.Request) []string {
	var out []string
	for _, tl := range items(req.Body["tools"]) {
		fn, _ := tl["function"].(map[string]any)
		out = append(out, str(fn["name"]))
	}
	return out
}

// toolsOffered returns the tools (name → description) of the last request whose user message is msg.
func toolsOffered(t *testing.T, fake *llmtest.Server, msg string) map[string]string {
	t.Helper()
	reqs := fake.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		msgs := items(reqs[i].Body["messages"])
		if len(msgs) > 0 && textOf(msgs[len(msgs)-1]["content"]) == msg {
			out := map[string]string{}
			for _, tl := range items(reqs[i].Body["tools"]) {
				fn, _ := tl["function"].(map[string]any)
				out[str(fn["name"])] = str(fn["description"])
			}
			return out
		}
	}
	t.Fatalf("no model request with the user message %q", msg)
	return nil
}

// useFake makes the workspace's OpenAI credential point at the fake.
func useFake(t *testing.T, c *client.Client, fake *llmtest.Server) {
	t.Helper()
	if _, err := c.CredentialCreate(context.Background(), client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
		Value: "sk-e2e-memory-0000000000000000000000", Metadata: map[string]any{"base_url": fake.URL + "/v1"}}); err != nil {
		t.Fatal(err)
	}
}

// spansOf returns an execution's spans of a name.
func spansOf(t *testing.T, c *client.Client, x *client.Execution, name string) []*client.SpanNode {
	t.Helper()
	tr, err := c.TraceGet(context.Background(), x.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	var out []*client.SpanNode
	for _, sp := range tr.AllSpans() {
		if sp.Name == name {
			out = append(out, sp)
		}
	}
	return out
}

// otherWorkspace creates a user who creates a workspace of their own, and returns a client
// acting in it.
func otherWorkspace(t *testing.T, p *proc, env map[string]string) *client.Client {
	t.Helper()
	ctx := context.Background()
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := exit(t, env, "users", "create", "--email", "other@example.com", "--password-file", pw, "--role", "member"); code != 0 {
		t.Fatalf("users create: %d %s", code, out)
	}
	status, raw, _, err := p.C.Raw(ctx, http.MethodPost, "/api/v1/auth/login", []byte(`{"email":"other@example.com","password":"correct horse battery staple"}`), nil)
	if err != nil || status != 200 {
		t.Fatalf("login: %d %s %v", status, raw, err)
	}
	var login struct {
		Data struct{ Token string } `json:"data"`
	}
	decode(t, raw, &login)
	user := client.New(p.URL, client.WithBearer(login.Data.Token))
	status, raw, _, err = user.Raw(ctx, http.MethodPost, "/api/v1/workspaces", []byte(`{"name":"Other"}`), nil)
	if err != nil || status != 201 {
		t.Fatalf("create workspace: %d %s %v", status, raw, err)
	}
	var ws struct {
		Data struct{ ID string } `json:"data"`
	}
	decode(t, raw, &ws)
	return client.New(p.URL, client.WithBearer(login.Data.Token), client.WithWorkspace(ws.Data.ID))
}

func mustRun(t *testing.T, c *client.Client, agentID, endUser, msg string) *client.Execution {
	t.Helper()
	x, err := c.Execute(context.Background(), agentID, client.ExecuteRequest{Input: map[string]any{"message": msg}, EndUserID: endUser})
	if err != nil || x.Status != "completed" {
		t.Fatalf("execute %q: %+v %v", msg, x, err)
	}
	return x
}

// TestServeAgentMemories runs agents with config.memory on `serve` (SQLite, and PostgreSQL
// when TEST_DATABASE_URL is set) over the OpenAI protocol: the relevant memories of the scope
// go into the prompt and irrelevant ones do not, the model's remember calls store memories a
// later run retrieves, and sessions, end users and workspaces do not see each other's.
func TestServeAgentMemories(t *testing.T) {
	t.Parallel()
	forEachServeDB(t, memorySuite)
}

func memorySuite(t *testing.T, env map[string]string) {
	delete(env, "MODELS")
	p := start(t, env, "serve")
	c := p.C
	ctx := context.Background()
	fake := scriptedModel(t)
	useFake(t, c, fake)
	const system = "You are a helpful assistant."

	t.Run("agent scope", func(t *testing.T) {
		a := mustAgent(t, c, "agent", client.AgentConfig{SystemPrompt: system, Memory: client.MemoryConfig{Enabled: client.Ptr(true)}})
		other := mustAgent(t, c, "agent", client.AgentConfig{SystemPrompt: system})
		mem := func(m client.MemoryCreateRequest) *client.Memory {
			t.Helper()
			got, err := c.MemoryCreate(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		teal := mem(client.MemoryCreateRequest{AgentID: a.ID, Key: "colour", Content: "The customer's favourite colour is teal."})
		mem(client.MemoryCreateRequest{AgentID: a.ID, Content: "Invoices go out on Mondays."})
		mem(client.MemoryCreateRequest{AgentID: other.ID, Content: "The favourite colour is crimson."})
		mem(client.MemoryCreateRequest{Content: "The favourite colour is magenta."}) // workspace-wide: no agent's own

		x := mustRun(t, c, a.ID, "", "What is my favourite colour?")
		out := outputText(x)
		if !strings.Contains(out, "[colour] The customer's favourite colour is teal.") || !strings.HasPrefix(out, "system: "+system) {
			t.Errorf("the relevant memory is not in the prompt: %q", out)
		}
		for _, w := range []string{"Mondays", "crimson", "magenta"} {
			if strings.Contains(out, w) {
				t.Errorf("the prompt holds the memory about %s: %q", w, out)
			}
		}
		sp := spansOf(t, c, x, "memory.retrieve")
		if len(sp) != 1 || sp[0].Kind != "memory" || sp[0].Attributes["scope"] != "agent" || sp[0].Attributes["count"] != float64(1) ||
			!strings.Contains(string(sp[0].Output), teal.ID) || !strings.Contains(string(sp[0].Output), `"preview":"The customer's favourite colour is teal."`) {
			t.Fatalf("retrieve span %+v %s", sp, sp[0].Output)
		}
		if ids, _ := sp[0].Attributes["memory_ids"].([]any); len(ids) != 1 || ids[0] != teal.ID {
			t.Errorf("memory_ids %v", sp[0].Attributes["memory_ids"])
		}

		// remember, then a later run retrieves what was stored.
		x = mustRun(t, c, a.ID, "", "Remember: The project codename is Bluebird.")
		if !strings.Contains(outputText(x), `"stored":true`) {
			t.Fatalf("remember result: %q", outputText(x))
		}
		if tools := toolsOffered(t, fake, "Remember: The project codename is Bluebird."); !strings.Contains(tools["remember"], "all your future conversations") {
			t.Errorf("tools offered: %v", tools)
		}
		rs := spansOf(t, c, x, "memory.remember")
		if len(rs) != 1 || rs[0].Kind != "memory" || rs[0].Attributes["outcome"] != "ok" || str(rs[0].Attributes["memory_id"]) == "" {
			t.Fatalf("remember span %+v", rs)
		}
		stored, err := c.MemoryGet(ctx, str(rs[0].Attributes["memory_id"]))
		if err != nil || stored.Content != "The project codename is Bluebird." || stored.AgentID == nil || *stored.AgentID != a.ID ||
			stored.SessionID != nil || stored.EndUserID != nil || stored.Metadata["execution_id"] != x.ID {
			t.Fatalf("stored memory %+v %v", stored, err)
		}
		if out := outputText(mustRun(t, c, a.ID, "", "Which codename does the project have?")); !strings.Contains(out, "Bluebird") || strings.Contains(out, "teal") {
			t.Errorf("a later run: %q", out)
		}
		// A bad remember call is an error for the model, not a failed run, and stores nothing.
		x = mustRun(t, c, a.ID, "", "Remember:   ")
		if out := outputText(x); !strings.Contains(out, `{"error":"content is required`) {
			t.Errorf("empty remember: %q", out)
		}
		if rs := spansOf(t, c, x, "memory.remember"); len(rs) != 1 || rs[0].Status != "error" || rs[0].Attributes["outcome"] != "tool_error" {
			t.Errorf("span of a bad remember call: %+v", rs)
		}
		if l, err := c.MemoryList(ctx, client.ListMemoriesParams{AgentID: a.ID}); err != nil || l.Pagination.Total != 3 {
			t.Errorf("memories of the agent: %+v %v", l, err)
		}
		// Nothing relevant: no memories and no error.
		x = mustRun(t, c, a.ID, "", "Tell me a joke about penguins.")
		if out := outputText(x); out != "system: "+system {
			t.Errorf("nothing relevant: %q", out)
		}
	})

	t.Run("session scope", func(t *testing.T) {
		a := mustAgent(t, c, "agent", client.AgentConfig{SystemPrompt: system, Memory: client.MemoryConfig{Enabled: client.Ptr(true), Scope: "session", MaxItems: 5}})
		sa, err := c.ChatSessionCreate(ctx, a.ID, "A", nil)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := c.ChatSessionCreate(ctx, a.ID, "B", nil)
		if err != nil {
			t.Fatal(err)
		}
		send := func(s *client.ChatSession, msg string) string {
			t.Helper()
			reply, err := c.ChatSend(ctx, s.ID, msg)
			if err != nil {
				t.Fatal(err)
			}
			return reply.Content
		}
		if got := send(sa, "Remember: My dog is called Rex."); !strings.Contains(got, `"stored":true`) {
			t.Fatalf("remember in session A: %q", got)
		}
		if got := send(sb, "What is my dog called?"); strings.Contains(got, "Rex") {
			t.Errorf("session B sees session A's memory: %q", got)
		}
		if got := send(sa, "What is my dog called?"); !strings.Contains(got, "My dog is called Rex.") {
			t.Errorf("session A does not get its memory: %q", got)
		}
		l, err := c.MemoryList(ctx, client.ListMemoriesParams{SessionID: sa.ID})
		if err != nil || l.Pagination.Total != 1 || *l.Data[0].SessionID != sa.ID {
			t.Fatalf("session A's memories: %+v %v", l, err)
		}
		// A run outside any chat session has no session: no memories, no remember tool, and
		// the span says why.
		x := mustRun(t, c, a.ID, "", "Remember: this is not a chat.")
		if _, ok := toolsOffered(t, fake, "Remember: this is not a chat.")["remember"]; ok {
			t.Error("remember offered to a run without a session")
		}
		sp := spansOf(t, c, x, "memory.retrieve")
		if len(sp) != 1 || !strings.Contains(str(sp[0].Attributes["skipped"]), "no chat session") || sp[0].Status != "ok" {
			t.Fatalf("span of a run without a session: %+v", sp)
		}
	})

	t.Run("end user scope", func(t *testing.T) {
		a := mustAgent(t, c, "agent", client.AgentConfig{SystemPrompt: system, Memory: client.MemoryConfig{Enabled: client.Ptr(true), Scope: "end_user"}})
		mustRun(t, c, a.ID, "user-x", "Remember: I prefer green tea.")
		if out := outputText(mustRun(t, c, a.ID, "user-y", "What do I prefer to drink?")); strings.Contains(out, "green tea") {
			t.Errorf("end user Y sees X's memory: %q", out)
		}
		if out := outputText(mustRun(t, c, a.ID, "user-x", "What do I prefer to drink?")); !strings.Contains(out, "I prefer green tea.") {
			t.Errorf("end user X does not get their memory: %q", out)
		}
		// Another workspace's memory about an end user of the same id is never used.
		other := otherWorkspace(t, p, env)
		user := "user-x"
		if _, err := other.MemoryCreate(ctx, client.MemoryCreateRequest{EndUserID: user, Content: "They prefer strong black coffee."}); err != nil {
			t.Fatal(err)
		}
		if out := outputText(mustRun(t, c, a.ID, "user-x", "What do I prefer to drink?")); strings.Contains(out, "coffee") {
			t.Errorf("another workspace's memory is in the prompt: %q", out)
		}
		// A run without end_user_id: no memories, no error.
		x := mustRun(t, c, a.ID, "", "What do I prefer to drink?")
		if sp := spansOf(t, c, x, "memory.retrieve"); len(sp) != 1 || !strings.Contains(str(sp[0].Attributes["skipped"]), "end_user_id") {
			t.Fatalf("span of a run without an end user: %+v", sp)
		}
	})

	t.Run("validation", func(t *testing.T) {
		for _, tc := range []struct{ config, field string }{
			{`{"model":"gpt-4o-mini","memory":{"enabled":true,"scope":"team"}}`, "config.memory.scope"},
			{`{"model":"gpt-4o-mini","memory":{"enabled":true,"max_items":101}}`, "config.memory.max_items"},
			{`{"model":"gpt-4o-mini","memory":{"enabled":true,"max_item":5}}`, "config.memory.max_item"},
			{`{"model":"gpt-4o-mini","data_sources":["2rfFqMzi2iDnN9XlC8v1APMzpRt"]}`, "config.data_sources[0]"},
		} {
			status, raw, _, err := c.Raw(ctx, http.MethodPost, "/api/v1/agents", []byte(`{"name":"Bad","type":"agent","config":`+tc.config+`}`), nil)
			if err != nil || status != 422 || !strings.Contains(string(raw), tc.field) {
				t.Errorf("%s: %d %s %v", tc.config, status, raw, err)
			}
		}
		// A version is checked the same way when it is saved.
		d, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Real", Type: "sqlite", Config: map[string]any{"path": filepath.Join(t.TempDir(), "x.db")}})
		if err != nil {
			t.Fatal(err)
		}
		a := mustAgent(t, c, "agent", client.AgentConfig{DataSources: []string{d.ID}})
		status, raw, _, err := c.Raw(ctx, http.MethodPost, "/api/v1/agents/"+a.ID+"/versions",
			[]byte(`{"config":{"model":"gpt-4o-mini","data_sources":["`+d.ID+`","nope"]}}`), nil)
		if err != nil || status != 422 || !strings.Contains(string(raw), "config.data_sources[1]") {
			t.Errorf("version with an unknown data source: %d %s %v", status, raw, err)
		}
	})
}

// TestServeAgentQueriesDataSources: an agent over the OpenAI protocol calls the query tool
// of a SQLite file and of a PostgreSQL database (TEST_DATABASE_URL), answers from the rows,
// and gets a refused write back as an error result, without failing the run.
func TestServeAgentQueriesDataSources(t *testing.T) {
	t.Parallel()
	env := serveEnv(dataDir(t))
	delete(env, "MODELS")
	p := start(t, env, "serve")
	c := p.C
	ctx := context.Background()
	fake := scriptedModel(t)
	useFake(t, c, fake)

	ask := func(t *testing.T, agentID, msg string) *client.Execution {
		t.Helper()
		return mustRun(t, c, agentID, "", msg)
	}
	checkTool := func(t *testing.T, x *client.Execution, dsID, outcome string) {
		t.Helper()
		var span *client.SpanNode
		tr, err := c.TraceGet(ctx, x.TraceID)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range tr.AllSpans() {
			if sp.Kind == "tool" {
				span = sp
			}
		}
		if span == nil || span.Attributes["data_source_id"] != dsID || span.Attributes["outcome"] != outcome {
			t.Fatalf("tool span %+v", span)
		}
	}

	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "shop.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, price_cents integer);
			INSERT INTO items VALUES (1, 'tea', 450), (2, 'coffee', 380), (3, 'cocoa', 520)`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		d, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Shop file!", Type: "sqlite", Description: "The shop's price list", Config: map[string]any{"path": path}})
		if err != nil {
			t.Fatal(err)
		}
		// A second source with the same name gets a name of its own.
		d2, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "shop-file", Type: "sqlite", Config: map[string]any{"path": path}})
		if err != nil {
			t.Fatal(err)
		}
		a := mustAgent(t, c, "agent", client.AgentConfig{SystemPrompt: "Answer from the data.", DataSources: []string{d.ID, d2.ID}})
		const q = "SQL[query_shop_file]: SELECT name, price_cents FROM items WHERE price_cents > 400 ORDER BY id"
		x := ask(t, a.ID, q)
		want := `tool said: {"columns":[{"name":"name","type":"text"},{"name":"price_cents","type":"integer"}],"rows":[["tea",450],["cocoa",520]],"row_count":2,"truncated":false}`
		if got := outputText(x); got != want {
			t.Errorf("answer\n got %s\nwant %s", got, want)
		}
		checkTool(t, x, d.ID, "ok")
		tools := toolsOffered(t, fake, q)
		if len(tools) != 2 || !strings.Contains(tools["query_shop_file"], "items(id integer, name text, price_cents integer)") ||
			!strings.Contains(tools["query_shop_file"], "The shop's price list") || tools["query_shop_file_2"] == "" {
			t.Errorf("tools offered: %v", tools)
		}
		// A write is refused by the database; the model reads why, and the run completes.
		x = ask(t, a.ID, "SQL[query_shop_file]: DELETE FROM items")
		if got := outputText(x); !strings.HasPrefix(got, `tool said: {"error":`) || !strings.Contains(got, "readonly") {
			t.Errorf("write: %s", got)
		}
		checkTool(t, x, d.ID, "tool_error")
		if res, err := c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT count(*) FROM items"}); err != nil || res.Rows[0][0] != float64(3) {
			t.Fatalf("after the refused write: %+v %v", res, err)
		}
		// A database that cannot be reached: the tool is described without tables, and the
		// model reads why its query failed; the run completes.
		cred, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "down", Type: "database_url", Value: "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"})
		if err != nil {
			t.Fatal(err)
		}
		down, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Down", Type: "postgres", CredentialID: cred.ID})
		if err != nil {
			t.Fatal(err)
		}
		b := mustAgent(t, c, "agent", client.AgentConfig{DataSources: []string{down.ID}})
		x = ask(t, b.ID, "SQL[query_down]: SELECT 1")
		if got := outputText(x); !strings.Contains(got, "connection refused") {
			t.Errorf("unreachable: %s", got)
		}
		checkTool(t, x, down.ID, "failed")
		if desc := toolsOffered(t, fake, "SQL[query_down]: SELECT 1")["query_down"]; !strings.Contains(desc, "could not be listed") {
			t.Errorf("description of an unreachable source: %s", desc)
		}
		// A data source deleted after the version was saved fails the run, naming it.
		if _, err := c.DataSourceDelete(ctx, down.ID); err != nil {
			t.Fatal(err)
		}
		x, err = c.Execute(ctx, b.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
		if err != nil || x.Status != "failed" || x.Error == nil || !strings.Contains(*x.Error, down.ID) {
			t.Fatalf("deleted data source: %+v %v", x, err)
		}
	})

	t.Run("postgres", func(t *testing.T) {
		url := dbtest.PostgresURL(t)
		if url == "" {
			t.Skip(dbtest.SkipMessage)
		}
		admin, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec(`CREATE TABLE customers (id int PRIMARY KEY, email text NOT NULL, balance numeric(10,2));
			INSERT INTO customers SELECT g, 'c' || g || '@example.com', g * 1.5 FROM generate_series(1, 40) g`); err != nil {
			t.Fatal(err)
		}
		cred, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "CRM", Type: "database_url", Value: url})
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "CRM", Type: "postgres", CredentialID: cred.ID,
			Config: map[string]any{"max_rows": 3, "max_execution_ms": 1000}})
		if err != nil {
			t.Fatal(err)
		}
		a := mustAgent(t, c, "agent", client.AgentConfig{SystemPrompt: "Answer from the CRM.", DataSources: []string{d.ID}})
		const q = "SQL[query_crm]: SELECT email, balance FROM customers WHERE id > 37 ORDER BY id"
		x := ask(t, a.ID, q)
		want := `tool said: {"columns":[{"name":"email","type":"text"},{"name":"balance","type":"numeric"}],"rows":[["c38@example.com","57.00"],["c39@example.com","58.50"],["c40@example.com","60.00"]],"row_count":3,"truncated":false}`
		if got := outputText(x); got != want {
			t.Errorf("answer\n got %s\nwant %s", got, want)
		}
		checkTool(t, x, d.ID, "ok")
		if desc := toolsOffered(t, fake, q)["query_crm"]; !strings.Contains(desc, "customers(id integer, email text, balance numeric)") || !strings.Contains(desc, "$1") {
			t.Errorf("description: %s", desc)
		}
		if got := outputText(ask(t, a.ID, "SQL[query_crm]: SELECT id FROM customers")); !strings.Contains(got, `"row_count":3,"truncated":true`) {
			t.Errorf("row cap: %s", got)
		}
		x = ask(t, a.ID, "SQL[query_crm]: UPDATE customers SET balance = 0")
		if got := outputText(x); !strings.Contains(got, "read-only transaction") {
			t.Errorf("write: %s", got)
		}
		checkTool(t, x, d.ID, "tool_error")
		x = ask(t, a.ID, "SQL[query_crm]: SELECT pg_sleep(5)")
		if got := outputText(x); !strings.Contains(got, "timed out after 1000 ms") {
			t.Errorf("timeout: %s", got)
		}
		checkTool(t, x, d.ID, "timeout")
	})
}

// TestEmulatorAgentQueriesSampleData: on the emulator, a data source's tool runs through the
// sample executor (real SQL over its sample tables): the simulated model's made-up query
// reaches the sample database, which answers or refuses it; the run completes either way.
func TestEmulatorAgentQueriesSampleData(t *testing.T) {
	t.Parallel()
	c := start(t, emulatorEnv(nil), "emulator").C
	a := mustAgent(t, c, "agent", client.AgentConfig{SystemPrompt: "Answer from the orders.", DataSources: []string{seedOrdersDB}})
	x := mustRun(t, c, a.ID, "", "How many orders were placed?")
	tr, err := c.TraceGet(context.Background(), x.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	var span *client.SpanNode
	for _, sp := range tr.AllSpans() {
		if sp.Kind == "tool" && sp.Attributes["data_source_id"] == seedOrdersDB {
			span = sp
		}
	}
	// "failed" would mean the query never reached a database (no executor, source unusable).
	if span == nil || (span.Attributes["outcome"] != "ok" && span.Attributes["outcome"] != "tool_error") {
		t.Fatalf("tool span %+v", span)
	}
	if !strings.HasPrefix(span.Name, "tool: query_") {
		t.Errorf("tool name %q", span.Name)
	}
}
