package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/agentconfig"
	"github.com/agentplane/agentplane/internal/api/openapicheck"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/triggers/platform"
)

func TestOpenAPIDocumentIsValid31(t *testing.T) {
	e := newTestEnv(t)
	resp, err := http.Get(e.ts.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := openapicheck.ValidateDocument(raw); err != nil {
		t.Fatalf("the served document is not valid OpenAPI 3.1: %v", err)
	}
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	// Every route of the table is documented, and nothing else is.
	n := 0
	for _, rt := range e.srv.routes {
		op, ok := doc.Paths[rt.path][strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("route %s is not in the document", rt.pattern())
			continue
		}
		if op["operationId"] != rt.op {
			t.Errorf("%s: operationId %v, want %s", rt.pattern(), op["operationId"], rt.op)
		}
		n++
	}
	docOps := 0
	for _, item := range doc.Paths {
		docOps += len(item)
	}
	if docOps != n {
		t.Errorf("document has %d operations, route table %d", docOps, n)
	}
}

func TestServerDocumentHasNoEmulatorRoutes(t *testing.T) {
	e := newTestEnv(t)
	srv, err := New(Config{Store: e.store, Logger: e.srv.log, Secrets: e.srv.cfg.Secrets, WorkspaceID: e.ws, Engine: e.srv.engine, DataSources: e.srv.cfg.DataSources})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(srv.OpenAPI()), "/admin/reset") {
		t.Fatal("the server's document lists emulator-only routes")
	}
	if err := openapicheck.ValidateDocument(srv.OpenAPI()); err != nil {
		t.Fatal(err)
	}
}

func TestDocsServedOffline(t *testing.T) {
	e := newTestEnv(t)
	for path, ct := range map[string]string{"/docs": "text/html", "/docs/": "text/html"} {
		t.Run(path, func(t *testing.T) {
			resp, err := http.Get(e.ts.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || !strings.Contains(string(body), "/openapi.json") ||
				strings.Contains(string(body), "https://") {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
		})
	}
	resp, err := http.Get(e.ts.URL + "/docs/assets/swagger-ui-bundle.js")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("bundle: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestScopesOfTheSpec: the scopes the route table declares are those of API.md section 3.
func TestScopesOfTheSpec(t *testing.T) {
	t.Parallel()
	s := auth.Scopes()
	if len(s) != 26 {
		t.Errorf("auth.Scopes() has %d entries: %v", len(s), s)
	}
	for _, want := range []string{"*", "agents:read", "agents:execute", "keys:admin", "sessions:read", "chat:write", "data_sources:execute", "datasets:read", "datasets:write"} {
		if !slices.Contains(s, want) {
			t.Errorf("auth.Scopes() lacks %q", want)
		}
	}
	if slices.Contains(s, "executions:write") {
		t.Error("executions:write is not a scope of the spec: cancel, approve and deny need executions:read")
	}
}

// TestRouteScopesAreKnown: every scope the route table requires is one a key can be given.
func TestRouteScopesAreKnown(t *testing.T) {
	s := &Server{cfg: Config{Emulator: true}}
	for _, rt := range s.routeTable() {
		if rt.scope != "" && !auth.IsScope(rt.scope) {
			t.Errorf("%s requires unknown scope %q", rt.pattern(), rt.scope)
		}
	}
}

// getDoc fetches /openapi.json from e with the given request headers and decodes it.
func getDoc(t *testing.T, e *testEnv, hdr map[string]string) (map[string]any, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.ts.URL+"/openapi.json", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(raw)) {
		t.Fatalf("GET /openapi.json: %d, Content-Length %d for %d bytes", resp.StatusCode, resp.ContentLength, len(raw))
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	return doc, raw
}

func serverURL(doc map[string]any) string {
	s, _ := doc["servers"].([]any)
	if len(s) != 1 {
		return fmt.Sprintf("%d servers", len(s))
	}
	u, _ := s[0].(map[string]any)["url"].(string)
	return u
}

// TestOpenAPIServers: servers is the --public-url when set, else the request's scheme and
// host; X-Forwarded-Proto counts only from a trusted proxy.
func TestOpenAPIServers(t *testing.T) {
	direct := newServerEnv(t)
	behind := newServerEnvWith(t, func(c *Config) { c.TrustedProxies = []string{"127.0.0.0/8"} })
	public := newServerEnvWith(t, func(c *Config) { c.PublicURL = "https://api.agentplane.test/base/" })
	emu := newTestEnv(t)
	tlsSrv := httptest.NewTLSServer(emu.srv.Handler())
	t.Cleanup(tlsSrv.Close)
	tlsEnv := &testEnv{t: t, ts: tlsSrv}
	validated := map[string]bool{} // documents without servers, as withoutServers writes them
	host := func(e *testEnv) string {
		return strings.TrimPrefix(strings.TrimPrefix(e.ts.URL, "http://"), "https://")
	}
	for _, tc := range []struct {
		name string
		e    *testEnv
		hdr  map[string]string
		want string
	}{
		{"from the request", direct, nil, direct.ts.URL},
		{"emulator", emu, nil, emu.ts.URL},
		{"untrusted X-Forwarded-Proto ignored", direct, map[string]string{"X-Forwarded-Proto": "https"}, direct.ts.URL},
		{"trusted X-Forwarded-Proto", behind, map[string]string{"X-Forwarded-Proto": "https"}, "https://" + host(behind)},
		{"trusted proxy, bogus proto", behind, map[string]string{"X-Forwarded-Proto": "gopher"}, behind.ts.URL},
		{"TLS", tlsEnv, nil, tlsSrv.URL},
		{"public URL wins", public, map[string]string{"X-Forwarded-Proto": "http"}, "https://api.agentplane.test/base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, raw := getDoc(t, tc.e, tc.hdr)
			if got := serverURL(doc); got != tc.want {
				t.Fatalf("servers url %q, want %q", got, tc.want)
			}
			// A document that differs from one validated already only in its servers url
			// (a string, checked above) is valid as that one was: validating one costs
			// about 2 s of CPU under -race, and the cases serve two documents seven times.
			rest := withoutServers(t, doc)
			if validated[rest] {
				return
			}
			if err := openapicheck.ValidateDocument(raw); err != nil {
				t.Fatalf("the served document is not valid OpenAPI 3.1: %v", err)
			}
			validated[rest] = true
		})
	}
	if got := serverURL(mustDecode(t, public.srv.OpenAPI())); got != "https://api.agentplane.test/base" {
		t.Errorf("OpenAPI() with a public URL: servers %q", got)
	}
	for _, bad := range []string{"ftp://x.test", "/relative", "https://", "https://x.test/?q=1", "https://u:p@x.test", "x.test"} {
		cfg := direct.srv.cfg
		cfg.PublicURL = bad
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "public URL") {
			t.Errorf("PublicURL %q: error %v, want one naming the public URL", bad, err)
		}
	}
}

// withoutServers is doc without its servers, as JSON (keys sorted, so equal documents give
// equal strings).
func withoutServers(t *testing.T, doc map[string]any) string {
	t.Helper()
	rest := maps.Clone(doc)
	delete(rest, "servers")
	b, err := json.Marshal(rest)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustDecode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// bothDocuments returns the emulator's and the server's documents, decoded.
func bothDocuments(t *testing.T) map[string]map[string]any {
	t.Helper()
	return map[string]map[string]any{"emulator": mustDecode(t, newTestEnv(t).srv.OpenAPI()), "server": mustDecode(t, newServerEnv(t).srv.OpenAPI())}
}

// walkJSON calls fn on every object of a decoded JSON value, with its JSON pointer.
func walkJSON(v any, ptr string, fn func(ptr string, obj map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(ptr, x)
		for k, c := range x {
			walkJSON(c, ptr+"/"+k, fn)
		}
	case []any:
		for i, c := range x {
			walkJSON(c, fmt.Sprintf("%s/%d", ptr, i), fn)
		}
	}
}

// TestOpenAPIArraysNeverNullable: no schema lets an array be null (the server sends []).
func TestOpenAPIArraysNeverNullable(t *testing.T) {
	for name, doc := range bothDocuments(t) {
		walkJSON(doc, "", func(ptr string, obj map[string]any) {
			types, _ := obj["type"].([]any)
			if slices.Contains(types, any("array")) && slices.Contains(types, any("null")) {
				t.Errorf("%s: #%s lets an array be null", name, ptr)
			}
			if alts, ok := obj["anyOf"].([]any); ok {
				hasArray, hasNull := false, false
				for _, a := range alts {
					m, _ := a.(map[string]any)
					hasArray = hasArray || m["type"] == "array"
					hasNull = hasNull || m["type"] == "null"
				}
				if hasArray && hasNull {
					t.Errorf("%s: #%s lets an array be null", name, ptr)
				}
			}
		})
	}
}

func schemaProp(t *testing.T, doc map[string]any, schema, prop string) map[string]any {
	t.Helper()
	p, _ := lookup(doc, "components.schemas."+schema+".properties."+prop).(map[string]any)
	if p == nil {
		t.Fatalf("components.schemas.%s has no property %s", schema, prop)
	}
	return p
}

func enumOf(p map[string]any) []string {
	var out []string
	for _, v := range p["enum"].([]any) {
		out = append(out, v.(string))
	}
	return out
}

// TestOpenAPIEnumsAndNullables: the response enums are the values the code uses, source is
// documented as an open set, and fields sent as null are nullable (ExecutionNode's embedded
// execution fields included) while pointers the server always sets are not.
func TestOpenAPIEnumsAndNullables(t *testing.T) {
	for name, doc := range bothDocuments(t) {
		for _, tc := range []struct {
			schema, prop string
			want         []string
		}{
			{"Agent", "type", agentconfig.Types()},
			{"Agent", "status", domain.AgentStatuses},
			{"Execution", "status", domain.ExecutionStatuses},
			{"ExecutionNode", "status", domain.ExecutionStatuses},
			{"Trace", "status", domain.ExecutionStatuses},
			{"Approval", "status", []string{"pending", "approved", "denied", "cancelled"}},
			{"Credential", "type", domain.CredentialTypes},
			{"DataSource", "type", domain.DataSourceTypes},
			{"MCPTool", "transport", domain.MCPTransports},
			{"StreamEventError", "code", []string{"failed", "cancelled", "rejected", "timeout", "interrupted", "unauthorized"}},
		} {
			t.Run(name+"/"+tc.schema+"."+tc.prop, func(t *testing.T) {
				if got := enumOf(schemaProp(t, doc, tc.schema, tc.prop)); !slices.Equal(got, tc.want) {
					t.Errorf("enum %v, want %v", got, tc.want)
				}
			})
		}
		src := schemaProp(t, doc, "Execution", "source")
		if src["enum"] != nil {
			t.Errorf("%s: Execution.source is a closed enum; the set is open", name)
		}
		for _, v := range append(slices.Clone(domain.ExecutionSources), platform.Types()...) {
			if !strings.Contains(src["description"].(string), v) {
				t.Errorf("%s: Execution.source's description does not list %s", name, v)
			}
		}
		for _, sp := range []struct{ schema, prop string }{{"ExecutionNode", "completed_at"}, {"ExecutionNode", "started_at"}, {"Execution", "completed_at"}} {
			t.Run(name+"/"+sp.schema+"."+sp.prop+"/nullable", func(t *testing.T) {
				if types, _ := schemaProp(t, doc, sp.schema, sp.prop)["type"].([]any); !slices.Contains(types, any("null")) {
					t.Errorf("sent as null but not documented nullable")
				}
			})
		}
		for _, sp := range []struct{ schema, prop string }{{"AgentPreview", "config"}, {"AgentConfig", "approval"}, {"AgentConfig", "temperature"},
			{"DataSource", "active_version_id"}, {"DataSource", "active_version"}, {"ChatMessage", "execution_id"}} {
			t.Run(name+"/"+sp.schema+"."+sp.prop+"/not_nullable", func(t *testing.T) {
				p := schemaProp(t, doc, sp.schema, sp.prop)
				if types, _ := p["type"].([]any); slices.Contains(types, any("null")) || p["anyOf"] != nil {
					t.Errorf("never sent as null but documented nullable: %v", p)
				}
			})
		}
	}
}

// TestOpenAPIDescriptions: every operation and tag is described, every description file
// names an operation, and the document has a licence.
func TestOpenAPIDescriptions(t *testing.T) {
	s := &Server{cfg: Config{}}
	ops := map[string]bool{}
	for _, rt := range s.routeTable() {
		ops[rt.op] = true
		if strings.TrimSpace(rt.description()) == "" {
			t.Errorf("%s (%s) has no description: write descriptions/%s.md", rt.pattern(), rt.op, rt.op)
		}
	}
	files, err := descriptionFiles.ReadDir("descriptions")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(f.Name(), ".md")
		if !ops[name] && !strings.HasPrefix(name, "_") {
			t.Errorf("descriptions/%s describes no operation (fragments shared by several start with _)", f.Name())
		}
	}
	for name, doc := range bothDocuments(t) {
		if lookup(doc, "info.license.name") != licenseName {
			t.Errorf("%s: info.license is %v", name, lookup(doc, "info.license"))
		}
		for _, tag := range doc["tags"].([]any) {
			if d, _ := tag.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s: tag %v has no description", name, tag)
			}
		}
	}
}

// TestOpenAPIHeaders: Idempotent-Replayed is documented on the success responses of every
// operation that honours Idempotency-Key (and only there), X-Request-ID on every JSON
// response, and the rate-limit headers on the server's authenticated ones.
func TestOpenAPIHeaders(t *testing.T) {
	for name, doc := range bothDocuments(t) {
		replayed := 0
		for path, item := range doc["paths"].(map[string]any) {
			for method, op := range item.(map[string]any) {
				params := fmt.Sprint(op.(map[string]any)["parameters"])
				takesKey := strings.Contains(params, "Idempotency-Key")
				for code, resp := range op.(map[string]any)["responses"].(map[string]any) {
					headers, _ := resp.(map[string]any)["headers"].(map[string]any)
					_, hasReplay := headers[hdrIdempotentReplayed]
					if success := code[0] == '2'; hasReplay != (takesKey && success) {
						t.Errorf("%s: %s %s %s: Idempotent-Replayed documented %v, Idempotency-Key %v", name, method, path, code, hasReplay, takesKey)
					}
					replayed += map[bool]int{true: 1}[hasReplay]
					if _, ok := headers[hdrRequestID]; !ok {
						t.Errorf("%s: %s %s %s: X-Request-ID not documented", name, method, path, code)
					}
					_, hasLimit := headers[hdrRateLimitRemaining]
					if name == "server" && strings.HasPrefix(path, "/api/v1/") && code != "401" && !strings.Contains(path, "/auth/login") && !strings.HasPrefix(path, "/api/v1/hooks/") && !hasLimit {
						t.Errorf("server: %s %s %s: RateLimit headers not documented", method, path, code)
					}
					if name == "emulator" && hasLimit {
						t.Errorf("emulator: %s %s %s documents rate limits the emulator does not have", method, path, code)
					}
				}
			}
		}
		if replayed == 0 {
			t.Errorf("%s: Idempotent-Replayed is documented nowhere", name)
		}
	}
}

// TestIdempotentReplayExposedToBrowsers: a replay carries Idempotent-Replayed, and CORS lets
// browser code read it and the other headers clients need.
func TestIdempotentReplayExposedToBrowsers(t *testing.T) {
	e := newTestEnv(t)
	hdr := map[string]string{"Idempotency-Key": "replay-1", "Origin": "https://app.agentplane.test"}
	body := `{"key":"k","content":"remember"}`
	var first string
	e.run([]scenario{
		{name: "first", method: "POST", path: "/api/v1/memories", header: hdr, body: body, status: 201,
			check: func(t *testing.T, b map[string]any) { first = lookup(b, "data.id").(string) }},
	})
	req, _ := http.NewRequest("POST", e.ts.URL+"/api/v1/memories", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || resp.Header.Get("Idempotent-Replayed") != "true" || !strings.Contains(string(raw), first) {
		t.Fatalf("replay: %d %v %s", resp.StatusCode, resp.Header, raw)
	}
	if err := e.oapi.Validate("POST", "/api/v1/memories", resp.StatusCode, raw); err != nil {
		t.Fatal(err)
	}
	exposed := strings.Split(resp.Header.Get("Access-Control-Expose-Headers"), ", ")
	for _, h := range []string{"Idempotent-Replayed", "X-Request-ID", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Location"} {
		if !slices.Contains(exposed, h) {
			t.Errorf("Access-Control-Expose-Headers %v lacks %s", exposed, h)
		}
	}
}

// TestOpenAPIGeneratorNames: no component schema has a name oapi-codegen gives the types it
// generates per operation (a schema LoginResponse and an operation login clash).
func TestOpenAPIGeneratorNames(t *testing.T) {
	for name, doc := range bothDocuments(t) {
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		for _, item := range doc["paths"].(map[string]any) {
			for _, op := range item.(map[string]any) {
				id := op.(map[string]any)["operationId"].(string)
				base := strings.ToUpper(id[:1]) + id[1:]
				for _, suffix := range []string{"Response", "Params", "JSONBody", "JSONRequestBody", "RequestBody"} {
					if _, clash := schemas[base+suffix]; clash {
						t.Errorf("%s: schema %s clashes with the %s oapi-codegen generates for operation %s", name, base+suffix, suffix, id)
					}
				}
			}
		}
	}
}

// TestStreamFramesMatchDocument: the frames of real streams (tools, a failure, a
// cancellation, a chat reply) match the document's frame schemas, and every event the
// streams may send is documented.
func TestStreamFramesMatchDocument(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	failing, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Failing", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Simulation: client.Simulation{Fail: client.FailAlways(), FailMessage: "simulated outage"}}})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Slow", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Simulation: client.Simulation{LatencyMs: client.Ptr[int64](2000)}}})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Steps", Type: "chain", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Steps: []client.AgentStep{{ID: "a", Instruction: "Summarise."}, {ID: "b", Instruction: "Translate."}}}})
	if err != nil {
		t.Fatal(err)
	}
	var failed, running, chained string
	e.run([]scenario{
		{name: "failing run", method: "POST", path: "/api/v1/agents/" + failing.ID + "/execute", body: `{"input":{"message":"x"}}`, status: 200,
			fields: map[string]any{"data.status": "failed"}, check: func(t *testing.T, b map[string]any) { failed = lookup(b, "data.id").(string) }},
		{name: "chain run", method: "POST", path: "/api/v1/agents/" + steps.ID + "/execute", body: `{"input":{"message":"x"}}`, status: 200,
			fields: map[string]any{"data.status": "completed"}, check: func(t *testing.T, b map[string]any) { chained = lookup(b, "data.id").(string) }},
		{name: "slow run", method: "POST", path: "/api/v1/agents/" + slow.ID + "/execute", body: `{"input":{"message":"x"},"async":true}`, status: 202,
			check: func(t *testing.T, b map[string]any) { running = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		// An unfinished execution's tree has null completed_at (embedded in ExecutionNode).
		{name: "tree of a running execution", method: "GET", path: "/api/v1/executions/" + running + "/tree", status: 200,
			fields: map[string]any{"data.completed_at": nil}},
		{name: "cancel", method: "POST", path: "/api/v1/executions/" + running + "/cancel", status: 200},
		{name: "error frame", method: "GET", path: "/api/v1/executions/" + failed + "/stream", header: map[string]string{"Last-Event-ID": "0"}, status: 200, sse: true},
		{name: "cancelled frame", method: "GET", path: "/api/v1/executions/" + running + "/stream", header: map[string]string{"Last-Event-ID": "0"}, status: 200, sse: true},
		{name: "chain frames", method: "GET", path: "/api/v1/executions/" + chained + "/stream", header: map[string]string{"Last-Event-ID": "0"}, status: 200, sse: true},
	})
	doc := mustDecode(t, e.srv.OpenAPI())
	for _, frame := range []string{"ExecutionStreamFrame", "ChatStreamFrame"} {
		mapping, _ := lookup(doc, "components.schemas."+frame+".discriminator.mapping").(map[string]any)
		for _, ev := range []string{"thinking", "tool_start", "tool_end", "content", "done", "error"} {
			if mapping[ev] == nil {
				t.Errorf("%s does not document the %s event", frame, ev)
			}
		}
		if _, ok := mapping["execution"]; ok != (frame == "ChatStreamFrame") {
			t.Errorf("%s: execution frame documented %v", frame, ok)
		}
	}
}

// TestListsAreNeverNull: lists the server builds itself are [] when empty, so the
// non-nullable array schemas hold (the response validator checks every scenario).
func TestListsAreNeverNull(t *testing.T) {
	e := newTestEnv(t)
	a, err := e.c.AgentCreate(context.Background(), client.AgentCreateRequest{Name: "Plain", Type: "simple",
		Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You answer briefly."}})
	if err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "preview without template variables", method: "POST", path: "/api/v1/agents/" + a.ID + "/preview", body: `{"input":{"message":"hi"}}`, status: 200,
			fields: map[string]any{"data.variables": []any{}, "data.missing": []any{}}},
		{name: "preview of an approval without checkpoints", method: "POST", path: "/api/v1/agents/" + a.ID + "/preview",
			body: `{"input":{"message":"hi"},"config":{"model":"gpt-4o-mini","approval":{}}}`, status: 200,
			fields: map[string]any{"data.config.approval.checkpoints": []any{}}},
	})
}
