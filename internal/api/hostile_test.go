package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/vault"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// TestHostileWalk walks every route of the route table with hostile input, on SQLite and (when
// TEST_DATABASE_URL is set) on PostgreSQL, with a "*" key: NUL in every string of a
// representative body, invalid UTF-8, null and non-object bodies, wrong content types, huge
// numbers, deep nesting, hostile path ids, oversized and broken query parameters, empty path
// segments and oversized headers. No answer may be a 500, every error carries the envelope,
// no run is left running, and nothing is logged as an error. What is refused while the
// request is read (its size, JSON syntax, content type, headers) is sent on SQLite alone.
func TestHostileWalk(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st, err := store.Open(context.Background(), "memory")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		hostileWalk(t, newTestEnv(t, onStore(st), asServer()), true)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		hostileWalk(t, newTestEnv(t, onStore(openTestPostgres(t)), asServer()), false)
	})
}

// openTestPostgres opens a fresh database on the server at TEST_DATABASE_URL (testPostgresURL),
// dropped when the test ends; it skips the test when the variable is unset.
func openTestPostgres(t *testing.T) *store.Store {
	t.Helper()
	return openTestStore(t, testPostgresURL(t))
}

// openTestStore opens the store at url, closed when the test ends.
func openTestStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// dbs is the package's migrated template: a test's PostgreSQL database and SQLite file are
// copies of it instead of a schema or file migrated again (the store's migrations cost seconds
// of CPU under -race, about 40 times in this package). TestMain drops it.
var dbs = storetest.NewTemplate()

// testPostgresURL returns the URL of a fresh database on the server at TEST_DATABASE_URL, a
// copy of the migrated template dropped when the test ends (so several stores, as several
// nodes, can share it); it skips the test when the variable is unset.
func testPostgresURL(t *testing.T) string {
	t.Helper()
	u := dbs.URL(t)
	if u == "" {
		t.Skip(dbtest.SkipMessage)
	}
	return u
}

// hostileRequest is one request of the walk and what its answer must be.
type hostileRequest struct {
	what   string // for failure messages
	method string
	path   string // escaped, with query
	body   []byte
	header map[string]string
	status int    // 0: anything below 500
	msg    string // a substring of the error message
	// early marks a request refused before authentication (headers, unclean paths), whose
	// status holds even on routes the key may not call.
	early bool
	// wire marks a request refused while it is read (headers, content type, size, JSON
	// syntax), before any store call: no store can change its answer, and one that got
	// through would fail on any store, so the walk sends it on SQLite only. (Ids and values
	// that reach a store, where PostgreSQL refuses what SQLite takes, go to both.) These
	// were 40 % of the PostgreSQL walk's CPU, a 1 MiB body on every route most of it.
	wire bool
}

// hostileWalk sends the hostile requests of every route to e; withWire adds those refused
// while the request is read (hostileRequest.wire), which one store's walk covers.
func hostileWalk(t *testing.T, e *testEnv, withWire bool) {
	ids := oneOfEach(t, e)
	client := &http.Client{Timeout: 20 * time.Second}
	sent := 0
	start := time.Now()
	// Deletes last, so that every other route meets the resources alive (a hostile request
	// that wrongly got through would delete them, and the walk would test 404s from then on).
	routes := slices.Clone(e.srv.routes)
	sort.SliceStable(routes, func(i, j int) bool {
		return routes[i].method != http.MethodDelete && routes[j].method == http.MethodDelete
	})
	for _, rt := range routes {
		if rt.emulator {
			continue // not served by the server
		}
		for _, hr := range hostileRequests(rt, ids) {
			if hr.wire && !withWire {
				continue
			}
			sent++
			checkHostile(t, e, client, rt, hr)
		}
	}
	t.Logf("%d hostile requests in %v", sent, time.Since(start).Round(time.Millisecond))
	// A refused chat message must not leave its run (or any other) running.
	deadline := time.Now().Add(10 * time.Second)
	for {
		running, err := e.store.ExecutionIDsByStatus(context.Background(), domain.StatusRunning)
		if err != nil {
			t.Fatal(err)
		}
		if len(running) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("executions left running: %v", running)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if log := e.logBuf.String(); strings.Contains(log, "level=ERROR") {
		t.Errorf("errors logged during the walk:\n%s", grepLines(log, "level=ERROR"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func checkHostile(t *testing.T, e *testEnv, c *http.Client, rt route, hr hostileRequest) {
	t.Helper()
	var rd io.Reader
	if hr.body != nil {
		rd = bytes.NewReader(hr.body)
	}
	req, err := http.NewRequest(hr.method, e.ts.URL+hr.path, rd)
	if err != nil {
		t.Fatalf("%s %s (%s): %v", hr.method, hr.path, hr.what, err)
	}
	if hr.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", e.key)
	for k, v := range hr.header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("%s: %s %s (%s): %v", rt.pattern(), hr.method, hr.path, hr.what, err)
		return
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: %s %.120s (%s): %s; body %.300s", rt.pattern(), hr.method, hr.path, hr.what, fmt.Sprintf(format, args...), raw)
	}
	if resp.StatusCode >= 500 {
		fail("status %d", resp.StatusCode)
		return
	}
	if hr.status != 0 && resp.StatusCode != hr.status {
		fail("status %d, want %d", resp.StatusCode, hr.status)
		return
	}
	if resp.StatusCode < 400 || rt.mcp {
		return // the MCP SDK answers what passes the key check, in its own shapes (JSON-RPC, text)
	}
	var env map[string]any
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(raw, &env) != nil {
		fail("error without the JSON envelope (Content-Type %q)", resp.Header.Get("Content-Type"))
		return
	}
	code, _ := env["error"].(string)
	msg, _ := env["message"].(string)
	if strings.HasPrefix(hr.path, openAIBase+"/") {
		// OpenAI's error shape instead of the envelope.
		oe, _ := env["error"].(map[string]any)
		code, _ = oe["code"].(string)
		msg, _ = oe["message"].(string)
		if oe == nil || code != statusCodes[resp.StatusCode] || msg == "" || oe["type"] != openAIErrorType(resp.StatusCode) {
			fail("not OpenAI's error shape")
			return
		}
	} else if d, ok := env["data"]; !ok || d != nil || code != statusCodes[resp.StatusCode] || msg == "" {
		fail("not the error envelope")
		return
	}
	if hr.msg != "" && !strings.Contains(msg, hr.msg) {
		fail("message %q does not mention %q", msg, hr.msg)
	}
}

// oneOfEach creates one of every resource in the test workspace and returns, by route prefix,
// an id (and version id) to put into paths, so that hostile bodies reach real handlers.
func oneOfEach(t *testing.T, e *testEnv) map[string][2]string {
	t.Helper()
	ctx := context.Background()
	c := e.c
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	simple, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "S", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	must(err)
	appr, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "A", Type: "approval", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Approval: client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "c", When: "before_output"}}}}})
	must(err)
	x, err := c.Execute(ctx, appr.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	must(err)
	approvals, err := c.ApprovalList(ctx, client.ListApprovalsParams{})
	must(err)
	p, err := c.PromptCreate(ctx, client.PromptCreateRequest{Name: "P", Template: "Hi {{ name }}"})
	must(err)
	pv, err := e.store.PromptGet(ctx, e.ws, p.ID)
	must(err)
	cred, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "C", Type: "api_key", Value: "sk-test-0000000000000000"})
	must(err)
	sess, err := c.ChatSessionCreate(ctx, simple.ID, "", nil)
	must(err)
	keys, err := c.APIKeyList(ctx, client.ListAPIKeysParams{})
	must(err)
	ds, err := e.store.DataSourceCreate(ctx, &domain.DataSource{WorkspaceID: e.ws, Name: "D", Type: "http"}, domain.JSONObject{"base_url": "https://example.com"}, "")
	must(err)
	dsv, err := e.store.DataSourceGet(ctx, e.ws, ds.ID)
	must(err)
	tool, err := e.store.MCPToolCreate(ctx, &domain.MCPTool{WorkspaceID: e.ws, Name: "T", Transport: "stdio", Command: "npx", Enabled: true})
	must(err)
	g, err := e.store.GuardrailCreate(ctx, &domain.Guardrail{WorkspaceID: e.ws, Name: "G", AppliesTo: "both", Action: "block", Enabled: true,
		Scanners: []domain.GuardrailScanner{{Type: "max_length", Config: domain.JSONObject{"max_chars": 10}}}})
	must(err)
	m, err := e.store.MemoryCreate(ctx, &domain.Memory{WorkspaceID: e.ws, Key: "k", Content: "remember", Metadata: domain.JSONObject{}})
	must(err)
	model, err := e.store.LLMModelCreate(ctx, e.ws, &domain.LLMModel{ID: "llama3.1:8b", Provider: "ollama", Name: "Llama", ContextWindow: 8192, Capabilities: domain.Strings{}})
	must(err)
	sc, err := e.store.ScoreConfigCreate(ctx, &domain.ScoreConfig{WorkspaceID: e.ws, Name: "ok", DataType: domain.ScoreBoolean})
	must(err)
	score, err := e.store.ScoreCreate(ctx, &domain.Score{WorkspaceID: e.ws, ConfigID: &sc.ID, Value: ptr(1.0), ExecutionID: &x.ID})
	must(err)
	asset, err := c.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte("png")), ExecutionID: x.ID})
	must(err)
	trig, err := vault.TriggerCreate(ctx, e.store, &domain.Trigger{WorkspaceID: e.ws, AgentID: simple.ID, Type: "webhook", Name: "W", Enabled: true,
		Config: domain.JSONObject{"respond": "async"}, TokenPrefix: "aph_walk"}, "walk-token-hash", nil, nil)
	must(err)
	dset, err := c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "DS"})
	must(err)
	item, err := c.DatasetItemCreate(ctx, dset.ID, client.DatasetItemRequest{Input: map[string]any{"message": "m"}})
	must(err)
	ev, err := c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "E", Type: "contains", Config: map[string]any{"value": "x"}})
	must(err)
	rule, err := c.EvaluationRuleCreate(ctx, client.EvaluationRuleCreateRequest{EvaluatorID: ev.ID})
	must(err)
	exp, err := c.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: dset.ID, AgentID: simple.ID, EvaluatorIds: []string{ev.ID}})
	must(err)
	queue, err := e.store.AnnotationQueueCreate(ctx, &domain.AnnotationQueue{WorkspaceID: e.ws, Name: "Q", ScoreConfigIDs: domain.Strings{sc.ID}})
	must(err)
	queued, _, err := e.store.AnnotationItemsAdd(ctx, e.ws, queue.ID, []string{x.ID})
	must(err)
	dl := &domain.WebhookDelivery{ID: store.NewID(), WorkspaceID: e.ws, ExecutionID: x.ID, TargetType: "agent", TargetID: simple.ID,
		URL: "https://example.com/hook", EventType: "execution.completed", Payload: []byte(`{}`), Secret: "sealed"}
	must(e.store.WebhookDeliveryCreate(ctx, dl))
	return map[string][2]string{
		"/api/v1/agents/":             {simple.ID, *simple.ActiveVersionID},
		"/api/v1/mcp/agents/":         {simple.ID, ""},
		"/api/v1/prompts/":            {p.ID, *pv.ActiveVersionID},
		"/api/v1/data-sources/":       {ds.ID, *dsv.ActiveVersionID},
		"/api/v1/credentials/":        {cred.ID},
		"/api/v1/mcp-tools/":          {tool.ID},
		"/api/v1/guardrails/":         {g.ID},
		"/api/v1/memories/":           {m.ID},
		"/api/v1/executions/":         {x.ID},
		"/api/v1/approvals/":          {approvals.Data[0].ID},
		"/api/v1/chat/sessions/":      {sess.ID},
		"/api/v1/traces/":             {x.TraceID},
		"/api/v1/api-keys/":           {keys.Data[0].ID},
		"/api/v1/workspaces/":         {e.ws},
		"/api/v1/llm-models/":         {model.ID},
		"/api/v1/score-configs/":      {sc.ID},
		"/api/v1/scores/":             {score.ID},
		"/api/v1/agent-triggers/":     {trig.ID},
		"/api/v1/assets/":             {asset.ID},
		"/api/v1/webhook-deliveries/": {dl.ID},
		"/api/v1/datasets/":           {dset.ID, item.ID},
		"/api/v1/evaluators/":         {ev.ID},
		"/api/v1/evaluation-rules/":   {rule.ID},
		"/api/v1/experiments/":        {exp.ID},
		"/api/v1/annotation-queues/":  {queue.ID, queued[0].ID},
	}
}

// representative bodies written by hand for the routes where a valid body matters most (it
// would reach the store or start a run but for the one hostile value); the rest are derived
// from the request type.
var handBodies = map[string]string{
	"createAgent":        `{"name":"n","type":"simple","description":"d","tags":["t"],"metadata":{"k":"v"},"config":{"model":"gpt-4o-mini","system_prompt":"s"}}`,
	"executeAgent":       `{"input":{"message":"m"},"metadata":{"k":"v"}}`,
	"sendChatMessage":    `{"content":"c"}`,
	"streamChatMessage":  `{"content":"c"}`,
	"createChatSession":  `{"agent_id":"%agent%","title":"t","metadata":{"k":"v"}}`,
	"createCredential":   `{"name":"n","type":"api_key","provider":"p","description":"d","metadata":{"k":"v"},"value":"sk-0123456789abcdef"}`,
	"createMemory":       `{"key":"k","content":"c","metadata":{"k":"v"}}`,
	"createPrompt":       `{"name":"n","template":"t {{ v }}","description":"d","tags":["t"]}`,
	"updateAgent":        `{"name":"n","description":"d","tags":["t"],"metadata":{"k":"v"}}`,
	"createAgentVersion": `{"config":{"model":"gpt-4o-mini","system_prompt":"s"},"notes":"n"}`,
	"createScore":        `{"name":"n","data_type":"numeric","value":1,"execution_id":"%execution%","comment":"c","metadata":{"k":"v"}}`,
	"createScoreConfig":  `{"name":"n","data_type":"categorical","categories":[{"label":"a","value":1}],"description":"d"}`,
}

func hostileRequests(rt route, ids map[string][2]string) []hostileRequest {
	pair := [2]string{"nope", "nope"}
	for prefix, v := range ids {
		if strings.HasPrefix(rt.path, prefix) {
			pair = v
		}
	}
	// The second id is a version's, or a dataset's item's.
	real := map[string]string{"id": pair[0], "version_id": pair[1], "item_id": pair[1], "token": "nope"}
	path := fillWith(rt.path, func(name string) string { return url.PathEscape(real[name]) })
	// A "*" key still gets 403 on routes only a logged-in user may call: there only "no 500"
	// and the envelope hold, except for what is refused before authentication.
	var out []hostileRequest
	add := func(hr hostileRequest) {
		if hr.method == "" {
			hr.method = rt.method
		}
		if hr.path == "" {
			hr.path = path
		}
		if rt.userOnly && !hr.early {
			hr.status, hr.msg = 0, ""
		}
		out = append(out, hr)
	}

	// Path ids that no resource can have: 404 before any store call.
	for _, name := range pathParams(rt.path) {
		for _, bad := range []string{"%00", "%FF", "ab%FFcd", "%E2%82", "x%0Ay", "%7F", "%C0%AF"} {
			p := fillWith(rt.path, func(n string) string {
				if n == name {
					return bad
				}
				return url.PathEscape(real[n])
			})
			add(hostileRequest{what: "path " + name + "=" + bad, path: p, status: http.StatusNotFound, body: bodyFor(rt, "{}")})
		}
		for _, odd := range []string{strings.Repeat("a", 300), "%25", "_", "%2F", "%20", "%F0%9F%98%80"} {
			p := fillWith(rt.path, func(n string) string {
				if n == name {
					return odd
				}
				return url.PathEscape(real[n])
			})
			add(hostileRequest{what: "path " + name + "=" + odd, path: p, body: bodyFor(rt, "{}")})
		}
		// An empty segment: the JSON 404, not a redirect with HTML.
		p := fillWith(rt.path, func(n string) string {
			if n == name {
				return ""
			}
			return url.PathEscape(real[n])
		})
		add(hostileRequest{what: "empty " + name, path: p, status: http.StatusNotFound, early: true})
	}
	for _, p := range []string{strings.Replace(path, "/", "//", 2), "/." + path, path + "/../x"} {
		add(hostileRequest{what: "unclean path", path: p, status: http.StatusNotFound, early: true})
	}

	// Query parameters: too long, NUL, invalid UTF-8; LIKE wildcards are harmless.
	names := []string{"q", "tag", "capability"}
	if rt.list {
		names = append(names, "page", "limit")
	}
	for _, p := range rt.params {
		names = append(names, p.name)
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for _, name := range names {
		add(hostileRequest{what: "long " + name, path: path + sep + name + "=" + strings.Repeat("%C3%A9", maxQueryValue+1), status: http.StatusBadRequest, msg: name})
		add(hostileRequest{what: "NUL " + name, path: path + sep + name + "=a%00b", status: http.StatusBadRequest, msg: name})
		add(hostileRequest{what: "bad UTF-8 " + name, path: path + sep + name + "=%FF", status: http.StatusBadRequest, msg: name})
		if rt.method == http.MethodGet && !rt.sse { // a valid stream request would stream on
			add(hostileRequest{what: "wildcards " + name, path: path + sep + name + "=" + url.QueryEscape(`%_\`+strings.Repeat("%", 400))})
		}
	}

	// Headers.
	add(hostileRequest{what: "oversized header", header: map[string]string{"X-Padding": strings.Repeat("a", MaxHeaderBytes+1)},
		status: http.StatusRequestHeaderFieldsTooLarge, body: bodyFor(rt, "{}"), early: true, wire: true})
	add(hostileRequest{what: "bad X-Workspace-ID", header: map[string]string{"X-Workspace-ID": "\xff\xfe"}, status: http.StatusBadRequest, body: bodyFor(rt, "{}"), early: true, wire: true})

	if rt.body == nil {
		return out
	}
	// Bodies.
	base := representative(rt, pair[0], ids)
	for _, ct := range []string{"application/jsonx", "application/json; charset=utf-16", "text/plain", "application/merge-patch+json",
		"application/json;;", "application/json; charset=latin1", "multipart/form-data; boundary=x"} {
		add(hostileRequest{what: "Content-Type " + ct, body: base, header: map[string]string{"Content-Type": ct}, status: http.StatusUnsupportedMediaType, wire: true})
	}
	for what, b := range map[string]string{
		"null body": "null", "array body": "[]", "string body": `"s"`, "number body": "1", "true body": "true",
		"invalid UTF-8": "{\"name\":\"\xff\xfe\"}", "invalid UTF-8 key": "{\"\xc3\":1}", "trailing data": "{} {}", "truncated": `{"name":"`,
	} {
		add(hostileRequest{what: what, body: []byte(b), status: http.StatusBadRequest, wire: true})
	}
	limit := maxBodyBytes
	if rt.op == "ingestSpans" { // a batch of spans may be larger
		limit = maxIngestBytes
	}
	add(hostileRequest{what: "oversized body", body: []byte(`{"name":"` + strings.Repeat("a", limit) + `"}`), status: http.StatusRequestEntityTooLarge, wire: true})
	var sample map[string]any
	if err := json.Unmarshal(base, &sample); err != nil {
		panic(fmt.Sprintf("%s: representative body %s: %v", rt.op, base, err))
	}
	for _, leaf := range leaves(sample, "") {
		switch leaf.v.(type) {
		case string:
			add(hostileRequest{what: "NUL in " + leaf.path, body: replaced(sample, leaf.path, "x\x00y"),
				status: http.StatusUnprocessableEntity, msg: leaf.path + ": must not contain NUL"})
			add(hostileRequest{what: "lone surrogate in " + leaf.path, body: bytes.Replace(replaced(sample, leaf.path, "\x01"), []byte(`\u0001`), []byte(`\udc80`), 1)})
		case float64:
			for _, n := range []string{"1e400", "9223372036854775808", "2147483648", "-2147483649", "1.5", "-1", "0"} {
				add(hostileRequest{what: "number " + n + " in " + leaf.path, body: replacedRaw(sample, leaf.path, n)})
			}
		case map[string]any:
			add(hostileRequest{what: "NUL key in " + leaf.path, body: replaced(sample, leaf.path, map[string]any{"k\x00": "v"}),
				status: http.StatusUnprocessableEntity, msg: leaf.path + ": keys must not contain NUL"})
		}
	}
	for name := range sample {
		add(hostileRequest{what: "too deep " + name, body: replacedRaw(sample, name, strings.Repeat("[", 10001)+strings.Repeat("]", 10001)), status: http.StatusBadRequest, wire: true})
		add(hostileRequest{what: "deep " + name, body: replacedRaw(sample, name, strings.Repeat(`{"a":`, 2000)+"1"+strings.Repeat("}", 2000))})
	}
	return out
}

// bodyFor is body for a route that takes one, else nil.
func bodyFor(rt route, body string) []byte {
	if rt.body == nil {
		return nil
	}
	return []byte(body)
}

func fillWith(path string, value func(name string) string) string {
	return pathParamRe.ReplaceAllStringFunc(path, func(m string) string { return value(strings.Trim(m, "{}")) })
}

// representative returns a body for the route: written by hand, or derived from its request
// type with a value of every field.
func representative(rt route, id string, ids map[string][2]string) []byte {
	if b, ok := handBodies[rt.op]; ok {
		return []byte(strings.NewReplacer("%agent%", ids["/api/v1/agents/"][0], "%execution%", ids["/api/v1/executions/"][0]).Replace(b))
	}
	b, err := json.Marshal(sampleOf(reflect.TypeOf(rt.body), 0))
	if err != nil {
		panic(err)
	}
	return b
}

var timeType = reflect.TypeFor[domain.Time]()

// sampleOf makes a JSON value of type t with every field set: strings "x" (or an enum's first
// value), numbers 1, maps and free-form values {"k": …}.
func sampleOf(t reflect.Type, depth int) any {
	if depth > 6 {
		return nil
	}
	if t == timeType {
		return "2030-01-01T00:00:00Z"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return sampleOf(t.Elem(), depth)
	case reflect.String:
		return "x"
	case reflect.Bool:
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return 1
	case reflect.Float32, reflect.Float64:
		return 0.5
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 { // json.RawMessage: any JSON
			return map[string]any{"k": "x"}
		}
		return []any{sampleOf(t.Elem(), depth+1)}
	case reflect.Map:
		return map[string]any{"k": sampleOf(t.Elem(), depth+1)}
	case reflect.Interface:
		return "x"
	case reflect.Struct:
		m := map[string]any{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				if inner, ok := sampleOf(f.Type, depth).(map[string]any); ok {
					for k, v := range inner {
						m[k] = v
					}
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			v := sampleOf(f.Type, depth+1)
			if enum := f.Tag.Get("enum"); enum != "" && f.Type.Kind() == reflect.String {
				v, _, _ = strings.Cut(enum, ",")
			}
			m[name] = v
		}
		return m
	}
	return nil
}

type leaf struct {
	path string
	v    any
}

// leaves lists every value of v below the root with its path as decode names it
// ("config.tools[0]"); objects are listed as well as their members.
func leaves(v any, path string) []leaf {
	var out []leaf
	switch x := v.(type) {
	case map[string]any:
		if path != "" {
			out = append(out, leaf{path, x})
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, leaves(x[k], joinPath(path, k))...)
		}
	case []any:
		for i, e := range x {
			out = append(out, leaves(e, fmt.Sprintf("%s[%d]", path, i))...)
		}
	default:
		out = append(out, leaf{path, v})
	}
	return out
}

// replaced is sample as JSON with the value at path replaced by v.
func replaced(sample map[string]any, path string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return replacedRaw(sample, path, string(b))
}

// replacedRaw is sample as JSON with the value at path replaced by raw JSON text.
func replacedRaw(sample map[string]any, path, raw string) []byte {
	const mark = "\x01hostile\x01"
	b, err := json.Marshal(setPath(deepCopy(sample), path, mark))
	if err != nil {
		panic(err)
	}
	q, _ := json.Marshal(mark)
	return bytes.Replace(b, q, []byte(raw), 1)
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// setPath sets the value at a path made by leaves.
func setPath(root any, path string, v any) any {
	cur := root
	parts := splitPath(path)
	for i, p := range parts {
		last := i == len(parts)-1
		switch x := cur.(type) {
		case map[string]any:
			if last {
				x[p.key] = v
			} else {
				cur = x[p.key]
			}
		case []any:
			if last {
				x[p.index] = v
			} else {
				cur = x[p.index]
			}
		}
	}
	return root
}

type pathPart struct {
	key   string
	index int
}

func splitPath(path string) []pathPart {
	var out []pathPart
	for _, seg := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(seg, "[")
		out = append(out, pathPart{key: key})
		for rest != "" {
			n := 0
			var after string
			fmt.Sscanf(rest, "%d]", &n)
			_, after, _ = strings.Cut(rest, "]")
			out = append(out, pathPart{index: n})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}

// TestHostileScenarios pins the answers to hostile input, on SQLite and PostgreSQL: the
// status, and a message naming the field, parameter or resource at fault.
func TestHostileScenarios(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		hostileScenarios(t, newServerEnv(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		hostileScenarios(t, newTestEnv(t, onStore(openTestPostgres(t)), asServer()))
	})
}

func hostileScenarios(t *testing.T, e *testEnv) {
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Chatty", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := e.c.ChatSessionCreate(ctx, a.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "C", Type: "api_key", Value: "sk-test-0000000000000000"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", maxQueryValue+1)
	ok500 := strings.Repeat("é", maxQueryValue)
	chat := "/api/v1/chat/sessions/" + sess.ID + "/messages"
	e.run([]scenario{
		// NUL anywhere in a body: 422 naming the JSON path.
		{name: "NUL in name", method: "POST", path: "/api/v1/agents", body: `{"name":"a\u0000b","type":"simple"}`, status: 422, code: "validation_error",
			message: `name: must not contain NUL (\u0000)`},
		{name: "NUL in config", method: "POST", path: "/api/v1/agents", body: `{"name":"n","type":"simple","config":{"model":"gpt-4o-mini","system_prompt":"x\u0000"}}`,
			status: 422, message: "config.system_prompt: must not contain NUL"},
		{name: "NUL deep in metadata", method: "POST", path: "/api/v1/agents", body: `{"name":"n","type":"simple","metadata":{"a":{"b":["ok","x\u0000"]}}}`,
			status: 422, message: "metadata.a.b[1]: must not contain NUL"},
		{name: "NUL in a metadata key", method: "POST", path: "/api/v1/agents", body: `{"name":"n","type":"simple","metadata":{"k\u0000":1}}`,
			status: 422, message: "metadata: keys must not contain NUL"},
		{name: "NUL in input", method: "POST", path: "/api/v1/agents/" + a.ID + "/execute", body: `{"input":{"message":"\u0000"}}`,
			status: 422, message: "input.message: must not contain NUL"},
		{name: "NUL in a chat message", method: "POST", path: chat, body: `{"content":"hello\u0000"}`, status: 422, message: "content: must not contain NUL"},
		{name: "the session is not left busy", method: "POST", path: chat, body: `{"content":"hello"}`, status: 200, fields: map[string]any{"data.role": "assistant"}},
		{name: "NUL in a credential value", method: "POST", path: "/api/v1/credentials", body: `{"name":"n","type":"api_key","value":"sk-\u0000-0123456789"}`,
			status: 422, message: "value: must not contain NUL"},
		{name: "an escaped backslash is no NUL", method: "POST", path: "/api/v1/agents", body: `{"name":"a\\u0000b","type":"simple"}`, status: 201,
			fields: map[string]any{"data.name": `a\u0000b`}},

		// Bodies that are not UTF-8 JSON objects: 400; other media types: 415.
		{name: "invalid UTF-8 body", method: "POST", path: "/api/v1/agents", body: "{\"name\":\"\xff\",\"type\":\"simple\"}", status: 400, message: "not valid UTF-8"},
		{name: "null body", method: "POST", path: "/api/v1/agents", body: `null`, status: 400, message: "got null"},
		{name: "null body on PATCH", method: "PATCH", path: "/api/v1/agents/" + a.ID, body: ` null `, status: 400, message: "got null"},
		{name: "Content-Type jsonx", method: "POST", path: "/api/v1/agents", body: `{"name":"n","type":"simple"}`,
			header: map[string]string{"Content-Type": "application/jsonx"}, status: 415, code: "unsupported_media_type", message: "application/json"},
		{name: "Content-Type utf-16", method: "POST", path: "/api/v1/agents", body: `{"name":"n","type":"simple"}`,
			header: map[string]string{"Content-Type": "application/json; charset=utf-16"}, status: 415, message: "utf-8"},
		{name: "Content-Type +json", method: "POST", path: "/api/v1/agents", body: `{"name":"n","type":"simple"}`,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}, status: 415},
		{name: "Content-Type unparsable", method: "POST", path: "/api/v1/agents", body: `{"name":"n","type":"simple"}`,
			header: map[string]string{"Content-Type": "application/json; charset"}, status: 415},
		{name: "Content-Type with UTF-8", method: "POST", path: "/api/v1/agents", body: `{"name":"n","type":"simple"}`,
			header: map[string]string{"Content-Type": `Application/JSON; Charset="UTF-8"`}, status: 201},

		// Credential values are stored as sent or refused.
		{name: "lone surrogate in a value", method: "POST", path: "/api/v1/credentials", body: `{"name":"n","type":"api_key","value":"sk-\udc80-0123456789"}`,
			status: 422, message: "value: must be valid Unicode"},
		{name: "unpaired high surrogate in a value", method: "PATCH", path: "/api/v1/credentials/" + cred.ID, body: `{"value":"sk-0123456789\ud83d"}`,
			status: 422, message: "value:"},
		{name: "a surrogate pair is fine", method: "POST", path: "/api/v1/credentials", body: `{"name":"emoji","type":"api_key","value":"sk-0123456789-\ud83d\ude00abc"}`,
			status: 201, fields: map[string]any{"data.masked_value": "sk-…😀abc"}},
		{name: "a value of the wrong type", method: "POST", path: "/api/v1/credentials", body: `{"name":"n","type":"api_key","value":7}`, status: 400, message: "value"},

		// Path ids no resource can have: 404 naming the resource only.
		{name: "NUL id", method: "GET", path: "/api/v1/agents/%00", status: 404, code: "not_found", message: "agent not found"},
		{name: "invalid UTF-8 id", method: "GET", path: "/api/v1/data-sources/%FF/versions", status: 404, message: "data source not found"},
		{name: "control character id", method: "PATCH", path: "/api/v1/chat/sessions/a%0Ab", body: `{}`, status: 404, message: "chat session not found"},
		{name: "invalid version id", method: "GET", path: "/api/v1/agents/" + a.ID + "/versions/%C0%AF", status: 404, message: "version not found"},

		// Query parameters.
		{name: "long q", method: "GET", path: "/api/v1/agents?q=" + long, status: 400, code: "bad_request", message: "query parameter q must be at most 500 characters"},
		{name: "q of 500 characters", method: "GET", path: "/api/v1/agents?q=" + ok500, status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "long tag", method: "GET", path: "/api/v1/prompts?tag=" + long, status: 400, message: "tag"},
		{name: "NUL capability", method: "GET", path: "/api/v1/llm-models?capability=a%00", status: 400, message: "capability must not contain NUL"},
		{name: "invalid UTF-8 filter", method: "GET", path: "/api/v1/executions?status=%FF", status: 400, message: "status is not valid UTF-8"},
		{name: "LIKE wildcards match literally", method: "GET", path: "/api/v1/agents?q=%25", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "underscore matches literally", method: "GET", path: "/api/v1/llm-models?capability=tool_", status: 200, fields: map[string]any{"pagination.total": 0}},
	})
	// What the document cannot describe: answers before any route.
	e.run([]scenario{
		{name: "empty segment", method: "GET", path: "/api/v1/executions//stream", status: 404, code: "not_found", message: "empty", undocumented: true},
		{name: "dot segment", method: "GET", path: "/api/v1/agents/./" + a.ID, status: 404, undocumented: true},
		{name: "oversized headers", method: "GET", path: "/api/v1/agents", header: map[string]string{"X-Padding": strings.Repeat("a", MaxHeaderBytes)},
			status: 431, code: "request_headers_too_large", message: "65536 bytes", undocumented: true},
		{name: "headers within the limit", method: "GET", path: "/api/v1/agents", header: map[string]string{"X-Padding": strings.Repeat("a", MaxHeaderBytes-1024)},
			status: 200, undocumented: true},
	})
}

// goneWriter is a response writer whose client has left: every write fails.
type goneWriter struct {
	header http.Header
	status int
	wrote  bytes.Buffer // what the handler tried to write
}

func (g *goneWriter) Header() http.Header { return g.header }
func (g *goneWriter) WriteHeader(code int) {
	if g.status == 0 {
		g.status = code
	}
}
func (g *goneWriter) Write(b []byte) (int, error) {
	g.wrote.Write(b)
	return 0, io.ErrClosedPipe
}
func (g *goneWriter) Flush() {}

// TestStreamClientGone: a client that leaves a stream is logged at debug level, not as a
// failed request, and nothing (no 500 envelope) is written into the stream after it.
func TestStreamClientGone(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "S", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	if err != nil || x.Status != "completed" {
		t.Fatalf("execute: %+v %v", x, err)
	}
	req := httptest.NewRequest("GET", "/api/v1/executions/"+x.ID+"/stream", nil)
	req.Header.Set("X-API-Key", e.key)
	w := &goneWriter{header: http.Header{}}
	e.srv.Handler().ServeHTTP(w, req)
	if w.status != http.StatusOK || strings.Contains(w.wrote.String(), "internal_error") {
		t.Fatalf("status %d, written %q", w.status, w.wrote.String())
	}
	log := e.logBuf.String()
	if strings.Contains(log, "level=ERROR") || !strings.Contains(log, `level=DEBUG msg="client left the stream"`) {
		t.Fatalf("log:\n%s", log)
	}
}
