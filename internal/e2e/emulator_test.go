package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// seedCounts is the spec's seed, exactly.
var seedCounts = map[string]int{
	"agents": 6, "agent_versions": 15, "prompts": 8, "prompt_versions": 12, "data_sources": 2,
	"credentials": 4, "llm_models": 42, "mcp_tools": 6, "guardrails": 1,
	"executions": 0, "chat_sessions": 0, "chat_messages": 0, "traces": 0,
}

// listTotals reads pagination.total of every top-level list endpoint, and sums the version
// lists of every agent and prompt.
func listTotals(t *testing.T, c *client.Client) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	for key, path := range map[string]string{
		"agents": "/api/v1/agents", "prompts": "/api/v1/prompts", "data_sources": "/api/v1/data-sources",
		"credentials": "/api/v1/credentials", "llm_models": "/api/v1/llm-models", "mcp_tools": "/api/v1/mcp-tools",
		"guardrails": "/api/v1/guardrails",
	} {
		var l client.List[map[string]any]
		status, body, _, err := c.Raw(ctx, http.MethodGet, path+"?limit=100", nil, nil)
		if err != nil || status != 200 {
			t.Fatalf("GET %s: %d %v %s", path, status, err, body)
		}
		decode(t, body, &l)
		out[key] = int(l.Pagination.Total)
		if key == "agents" || key == "prompts" {
			sum := 0
			for _, item := range l.Data {
				var vl client.List[map[string]any]
				_, vb, _, _ := c.Raw(ctx, http.MethodGet, path+"/"+item["id"].(string)+"/versions", nil, nil)
				decode(t, vb, &vl)
				sum += int(vl.Pagination.Total)
			}
			out[strings.TrimSuffix(key, "s")+"_versions"] = sum
		}
	}
	return out
}

func checkCounts(t *testing.T, c *client.Client, want map[string]int) {
	t.Helper()
	stats, err := c.StoreStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range want {
		if stats[k] != n {
			t.Errorf("/admin/store/stats %s = %d, want %d", k, stats[k], n)
		}
	}
	for k, n := range listTotals(t, c) {
		if want[k] != n {
			t.Errorf("list total of %s = %d, want %d", k, n, want[k])
		}
	}
}

func TestEmulatorSeed(t *testing.T) {
	t.Parallel()
	p := start(t, emulatorEnv(nil), "emulator")
	checkCounts(t, p.C, seedCounts)
	h, err := p.C.Health(context.Background())
	if err != nil || h.Status != "ok" || h.Mode != "emulator" || h.Models != "simulated" {
		t.Fatalf("health: %+v %v", h, err)
	}
	// The six agent types are all seeded.
	l, err := p.C.AgentList(context.Background(), client.ListAgentsParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, a := range l.Data {
		types[string(a.Type)] = true
		if a.ActiveVersionID == nil || a.Config == nil {
			t.Errorf("seed agent %s has no active version", a.ID)
		}
	}
	if len(types) != 6 {
		t.Errorf("seed agent types: %v", types)
	}
}

func TestEmulatorResetRestoresSeed(t *testing.T) {
	t.Parallel()
	p := start(t, emulatorEnv(nil), "emulator")
	ctx := context.Background()
	l, _ := p.C.AgentList(ctx, client.ListAgentsParams{})
	victim := l.Data[0]
	if _, err := p.C.AgentDelete(ctx, victim.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "Extra", Type: "simple"}); err != nil {
		t.Fatal(err)
	}
	simple, err := p.C.AgentList(ctx, client.ListAgentsParams{Type: "simple"})
	if err != nil || len(simple.Data) == 0 {
		t.Fatalf("no simple seed agent: %v", err)
	}
	if _, err := p.C.AgentVersionCreate(ctx, simple.Data[0].ID, client.AgentConfig{Model: "gpt-4o"}, "more"); err != nil {
		t.Fatal(err)
	}
	stats, err := p.C.Reset(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range seedCounts {
		if stats[k] != n {
			t.Errorf("reset returned %s = %d, want %d", k, stats[k], n)
		}
	}
	checkCounts(t, p.C, seedCounts)
	back, err := p.C.AgentGet(ctx, victim.ID)
	if err != nil || back.Name != victim.Name || *back.ActiveVersion != *victim.ActiveVersion {
		t.Fatalf("deleted seed agent not restored: %+v %v", back, err)
	}
}

func TestEmulatorFixturesWithoutSeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFixtures(t, dir, validFixtures)
	p := start(t, emulatorEnv(map[string]string{"SEED": "false", "FIXTURES": dir}), "emulator")
	want := map[string]int{
		"agents": 2, "agent_versions": 3, "prompts": 1, "prompt_versions": 2, "llm_models": 1,
		"credentials": 1, "data_sources": 1, "mcp_tools": 1, "guardrails": 1,
	}
	checkCounts(t, p.C, want)
	ctx := context.Background()
	a, err := p.C.AgentGet(ctx, "2rfFt6qa0UQfFHDSW7MvKn0cfZZ")
	if err != nil {
		t.Fatal(err)
	}
	if *a.ActiveVersion != 2 || a.Config.PromptID == "" {
		t.Fatalf("fixture agent: active %v config %+v", *a.ActiveVersion, a.Config)
	}
	// Reset reloads the fixtures, not the seed.
	if _, err := p.C.AgentDelete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.C.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, p.C, want)
}

func TestEmulatorFixturesAddToSeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFixtures(t, dir, map[string]string{"agents.json": `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfZY","name":"Extra","type":"simple","config":{"model":"gpt-4o"}}]`})
	p := start(t, emulatorEnv(map[string]string{"FIXTURES": dir}), "emulator")
	want := map[string]int{}
	for k, v := range seedCounts {
		want[k] = v
	}
	want["agents"]++
	want["agent_versions"]++
	checkCounts(t, p.C, want)
}

func TestEmulatorFixtureErrorsStopStartup(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		files map[string]string
		want  []string
	}{
		"malformed":    {map[string]string{"agents.json": `[{"name":`}, []string{"agents.json", "malformed"}},
		"not an array": {map[string]string{"prompts.json": `{"name":"x"}`}, []string{"prompts.json"}},
		"missing agent": {map[string]string{"agent_versions.json": `[{"id":"2rfFtr6n7T8nVN06UbuWhUmlc1Z","agent_id":"2rfFt6qa0UQfFHDSW7MvKn0cfQQ","config":{"model":"gpt-4o"}}]`},
			[]string{"agent_versions.json", "entry 0", "2rfFtr6n7T8nVN06UbuWhUmlc1Z", "agent 2rfFt6qa0UQfFHDSW7MvKn0cfQQ"}},
		"missing prompt": {map[string]string{"prompt_versions.json": `[{"prompt_id":"2rfFt6qa0UQfFHDSW7MvKn0cfQQ","version":1,"template":"x"}]`},
			[]string{"prompt_versions.json", "entry 0", "prompt 2rfFt6qa0UQfFHDSW7MvKn0cfQQ"}},
		"unknown field": {map[string]string{"agents.json": `[{"name":"x","type":"simple","colour":"red"}]`}, []string{"agents.json", "colour"}},
		"config typo": {map[string]string{"agents.json": `[{"name":"x","type":"simple","config":{"model":"gpt-4o","temprature":1}}]`},
			[]string{"agents.json", "entry 0", "config.temprature: unknown field; did you mean temperature?"}},
		"prompt config typo": {map[string]string{"prompts.json": `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfQQ","name":"p"}]`,
			"prompt_versions.json": `[{"prompt_id":"2rfFt6qa0UQfFHDSW7MvKn0cfQQ","version":1,"template":"x","config":{"modle":"gpt-4o"}}]`},
			[]string{"prompt_versions.json", "config.modle", "did you mean model?"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFixtures(t, dir, tc.files)
			code, stderr := exit(t, emulatorEnv(map[string]string{"FIXTURES": dir}), "emulator")
			if code == 0 {
				t.Fatal("emulator started with a bad fixture")
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("error %q does not mention %q", stderr, w)
				}
			}
		})
	}
}

func TestEmulatorFlagsAndEnv(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
		want string
	}{
		"bad PORT":        {map[string]string{"PORT": "eighty"}, nil, "--port"},
		"port range":      {nil, []string{"--port", "70000"}, "--port"},
		"bad flag":        {nil, []string{"--port", "x"}, "port"},
		"bad LOG_LEVEL":   {map[string]string{"LOG_LEVEL": "loud"}, nil, "--log-level"},
		"bad SEED":        {map[string]string{"SEED": "maybe"}, nil, "--seed"},
		"unknown flag":    {nil, []string{"--colour"}, "colour"},
		"fixtures is dir": {map[string]string{"FIXTURES": "/nonexistent/dir"}, nil, "--fixtures"},
	} {
		t.Run(name, func(t *testing.T) {
			env := emulatorEnv(tc.env)
			code, stderr := exit(t, env, append([]string{"emulator"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d (want 2), stderr %q (want mention of %q)", code, stderr, tc.want)
			}
		})
	}
	// A flag wins over its environment variable.
	p := start(t, emulatorEnv(map[string]string{"PORT": "not-a-port", "SEED": "false"}), "emulator", "--port", "0", "--seed=true")
	stats, err := p.C.StoreStats(context.Background())
	if err != nil || stats["agents"] != 6 {
		t.Fatalf("--seed=true over SEED=false: %v %v", stats, err)
	}
}

func TestEmulatorCORS(t *testing.T) {
	t.Parallel()
	p := start(t, emulatorEnv(map[string]string{"CORS_ORIGINS": "https://app.example"}), "emulator")
	ctx := context.Background()
	pre := http.Header{"Origin": {"https://app.example"}, "Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"content-type,x-api-key"}}
	status, _, h, err := p.C.Raw(ctx, http.MethodOptions, "/api/v1/agents", nil, pre)
	if err != nil || status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || h.Get("Access-Control-Allow-Headers") != "content-type,x-api-key" {
		t.Fatalf("allowed preflight: %d %v %v", status, h, err)
	}
	pre.Set("Origin", "https://evil.example")
	if status, _, h, _ = p.C.Raw(ctx, http.MethodOptions, "/api/v1/agents", nil, pre); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("disallowed preflight: %d %v", status, h)
	}
	status, _, h, _ = p.C.Raw(ctx, http.MethodGet, "/api/v1/agents", nil, http.Header{"Origin": {"https://app.example"}})
	if status != 200 || h.Get("Access-Control-Allow-Origin") != "https://app.example" || h.Get("Access-Control-Expose-Headers") == "" {
		t.Fatalf("simple request: %d %v", status, h)
	}
	// Any API key, or none, is accepted.
	status, _, _, _ = p.C.Raw(ctx, http.MethodGet, "/api/v1/agents", nil, http.Header{"X-Api-Key": {"anything"}})
	if status != 200 {
		t.Fatalf("emulator refused an arbitrary key: %d", status)
	}
}

func writeFixtures(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// validFixtures reference each other across files, in the loader's order.
var validFixtures = map[string]string{
	"llm_models.json":  `[{"id":"local-llama","provider":"meta","name":"Local Llama","context_window":8192,"max_output_tokens":2048,"input_price_per_million":0,"output_price_per_million":0,"capabilities":["chat"]}]`,
	"credentials.json": `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfC1","name":"DB","type":"database_url","provider":"postgres","value":"postgres://u:p@db/x"}]`,
	"mcp_tools.json":   `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfT1","name":"Fetch","description":"HTTP fetch","transport":"stdio","command":"npx","args":["-y","fetch-mcp"],"enabled":true,"tools":[{"name":"fetch","description":"Fetch a URL","input_schema":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}}]}]`,
	"guardrails.json":  `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfG1","name":"Length","description":"","applies_to":"input","action":"block","enabled":true,"scanners":[{"type":"max_length","config":{"max_chars":1000}}]}]`,
	"data_sources.json": `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfD1","name":"Orders","type":"postgres","description":"","credential_id":"2rfFt6qa0UQfFHDSW7MvKn0cfC1",
		"config":{"host":"db","port":5432,"database":"x","tables":[{"name":"orders","columns":[{"name":"id","type":"integer"}]}]}}]`,
	"prompts.json":         `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfP1","name":"Greeter","description":"","tags":[]}]`,
	"prompt_versions.json": `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfV1","prompt_id":"2rfFt6qa0UQfFHDSW7MvKn0cfP1","version":1,"template":"Hello {{ name }}","notes":"","active":true},{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfV2","prompt_id":"2rfFt6qa0UQfFHDSW7MvKn0cfP1","version":2,"template":"Hi {{ name }}!","notes":"","active":false}]`,
	"agents.json": `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfZZ","name":"Greeter","description":"","type":"agent","status":"active","tags":[],"metadata":{}},
		{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfZX","name":"Plain","type":"simple","config":{"model":"local-llama","system_prompt":"Be brief."}}]`,
	"agent_versions.json": `[{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfA1","agent_id":"2rfFt6qa0UQfFHDSW7MvKn0cfZZ","version":1,"notes":"","active":false,"config":{"model":"local-llama","system_prompt":"Hi"}},
		{"id":"2rfFt6qa0UQfFHDSW7MvKn0cfA2","agent_id":"2rfFt6qa0UQfFHDSW7MvKn0cfZZ","version":2,"notes":"","active":true,"config":{"model":"local-llama","prompt_id":"2rfFt6qa0UQfFHDSW7MvKn0cfP1","tools":["2rfFt6qa0UQfFHDSW7MvKn0cfT1"],"guardrails":["2rfFt6qa0UQfFHDSW7MvKn0cfG1"]}}]`,
}
