package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
)

// keyCall sends one request with the given X-API-Key ("" sends none) and extra headers, and
// returns the status and the decoded body.
func keyCall(t *testing.T, p *proc, key, method, path, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, path, raw)
	}
	return resp.StatusCode, out
}

// newKey creates a key through the API with the bootstrap key and returns its id and raw form.
func newKey(t *testing.T, p *proc, body string) (string, string) {
	t.Helper()
	status, out := keyCall(t, p, p.Key, "POST", "/api/v1/api-keys", body, nil)
	if status != 201 {
		t.Fatalf("create key %s: %d %v", body, status, out)
	}
	d := out["data"].(map[string]any)
	return d["id"].(string), d["key"].(string)
}

func wantStatus(t *testing.T, p *proc, key, method, path string, hdr map[string]string, status int, msg string) map[string]any {
	t.Helper()
	got, out := keyCall(t, p, key, method, path, "", hdr)
	if got != status {
		t.Fatalf("%s %s: %d, want %d: %v", method, path, got, status, out)
	}
	if msg != "" && !strings.Contains(out["message"].(string), msg) {
		t.Fatalf("%s %s: message %q does not mention %q", method, path, out["message"], msg)
	}
	if key != "" && status >= 400 && strings.Contains(out["message"].(string), key) {
		t.Fatalf("the key is echoed: %v", out)
	}
	return out
}

// TestServeRequiresAPIKey checks the rules of API.md section 2 against `serve` on SQLite
// (over IPv4 and IPv6) and on PostgreSQL when TEST_DATABASE_URL is set.
func TestServeRequiresAPIKey(t *testing.T) {
	t.Parallel()
	forEachServeDB(t, func(t *testing.T, env map[string]string) { requiresAPIKeySuite(t, env, "127.0.0.0/8") })
	t.Run("sqlite-ipv6", func(t *testing.T) {
		env := serveEnv(dataDir(t))
		env["HOST"] = "::1"
		requiresAPIKeySuite(t, env, "::1/128")
	})
}

// requiresAPIKeySuite runs the key rules against one server; loopback is the CIDR range the
// test client's address falls in.
func requiresAPIKeySuite(t *testing.T, env map[string]string, loopback string) {
	p := start(t, env, "serve")
	if !strings.HasPrefix(p.Key, "ap_") {
		t.Fatalf("no bootstrap key in the logs:\n%s", p.Logs())
	}
	const agents = "/api/v1/agents"
	wantStatus(t, p, "", "GET", agents, nil, 401, "X-API-Key")
	wantStatus(t, p, "not-a-key", "GET", agents, nil, 401, "invalid API key")
	wantStatus(t, p, "ap_"+strings.Repeat("x", 40), "GET", agents, nil, 401, "invalid API key")
	wantStatus(t, p, "", "GET", "/health", nil, 200, "")
	wantStatus(t, p, p.Key, "GET", agents, nil, 200, "")

	_, reader := newKey(t, p, `{"name":"reader","scopes":["agents:read"]}`)
	wantStatus(t, p, reader, "GET", agents, nil, 200, "")
	got, out := keyCall(t, p, reader, "POST", agents, `{"name":"a","type":"simple"}`, nil)
	if got != 403 || !strings.Contains(out["message"].(string), "agents:write") {
		t.Fatalf("missing scope: %d %v", got, out)
	}
	wantStatus(t, p, reader, "GET", "/api/v1/api-keys", nil, 403, "*")

	_, far := newKey(t, p, `{"name":"far","scopes":["*"],"allowed_ips":["10.9.8.7","2001:db8::1"]}`)
	wantStatus(t, p, far, "GET", agents, nil, 403, "allowed_ips")
	_, near := newKey(t, p, `{"name":"near","scopes":["*"],"allowed_ips":["10.0.0.0/8","`+loopback+`"]}`)
	wantStatus(t, p, near, "GET", agents, nil, 200, "")

	_, web := newKey(t, p, `{"name":"web","scopes":["*"],"allowed_origins":["https://app.example"]}`)
	wantStatus(t, p, web, "GET", agents, map[string]string{"Origin": "https://evil.example"}, 403, "origin")
	wantStatus(t, p, web, "GET", agents, map[string]string{"Origin": "https://app.example"}, 200, "")
	wantStatus(t, p, web, "GET", agents, nil, 200, "")

	exp := time.Now().Add(1200 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	_, soon := newKey(t, p, `{"name":"soon","scopes":["*"],"expires_at":"`+exp+`"}`)
	wantStatus(t, p, soon, "GET", agents, nil, 200, "")
	time.Sleep(time.Until(time.Now().Add(1300 * time.Millisecond)))
	wantStatus(t, p, soon, "GET", agents, nil, 401, "expired")

	// Rotation and revocation take effect at once, even for a key this server has cached.
	rotID, rot := newKey(t, p, `{"name":"rot","scopes":["agents:read"]}`)
	wantStatus(t, p, rot, "GET", agents, nil, 200, "")
	out = wantStatus(t, p, p.Key, "POST", "/api/v1/api-keys/"+rotID+"/rotate", nil, 200, "")
	rotated := out["data"].(map[string]any)["key"].(string)
	wantStatus(t, p, rot, "GET", agents, nil, 401, "invalid API key")
	wantStatus(t, p, rotated, "GET", agents, nil, 200, "")
	wantStatus(t, p, p.Key, "DELETE", "/api/v1/api-keys/"+rotID, nil, 200, "")
	wantStatus(t, p, rotated, "GET", agents, nil, 401, "invalid API key")
	wantStatus(t, p, p.Key, "GET", "/api/v1/api-keys/"+rotID, nil, 404, "")

	// The raw key is shown only by create and rotate.
	list := wantStatus(t, p, p.Key, "GET", "/api/v1/api-keys?limit=100", nil, 200, "")
	for _, it := range list["data"].([]any) {
		k := it.(map[string]any)
		if _, ok := k["key"]; ok {
			t.Fatalf("list shows a key: %v", k)
		}
		one := wantStatus(t, p, p.Key, "GET", "/api/v1/api-keys/"+k["id"].(string), nil, 200, "")
		if _, ok := one["data"].(map[string]any)["key"]; ok {
			t.Fatalf("get shows a key: %v", one)
		}
	}
	if n := len(list["data"].([]any)); n != 6 {
		t.Fatalf("%d keys listed, want 6 (bootstrap, reader, far, near, web, soon)", n)
	}
	if c := client.New(p.URL, client.WithAPIKey(reader)); c == nil {
		t.Fatal("client")
	} else if _, err := c.AgentList(context.Background(), client.ListAgentsParams{}); err != nil {
		t.Fatalf("the SDK with a scoped key: %v", err)
	}
}

// TestServeKeysCommand: `agentplane admin keys` creates, lists and revokes keys in the configured
// database; a key it creates works on a running server.
func TestServeKeysCommand(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	p := start(t, serveEnv(dir), "serve")
	keys := func(args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		lookup := func(k string) (string, bool) { v, ok := map[string]string{"DATA_DIR": dir}[k]; return v, ok }
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code := cli.RunEnv(ctx, append([]string{"admin", "keys"}, args...), lookup, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errs := keys("create", "--name", "from-cli", "--scopes", "agents:read,agents:execute")
	raw := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(raw, "ap_") {
		t.Fatalf("keys create: %d %q %s", code, out, errs)
	}
	wantStatus(t, p, raw, "GET", "/api/v1/agents", nil, 200, "")
	wantStatus(t, p, raw, "GET", "/api/v1/api-keys", nil, 403, "*")
	if code, _, errs := keys("create", "--name", "x", "--scopes", "agents:fly"); code != 2 || !strings.Contains(errs, "agents:fly") {
		t.Fatalf("bad scope: %d %s", code, errs)
	}
	code, out, errs = keys("list")
	if code != 0 || !strings.Contains(out, "from-cli") || !strings.Contains(out, "bootstrap") || strings.Contains(out, raw) || strings.Contains(out, p.Key) {
		t.Fatalf("keys list: %d %s %s", code, out, errs)
	}
	var id string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "from-cli" {
			id = f[0]
		}
	}
	if code, out, errs := keys("revoke", id); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("keys revoke %s: %d %s %s", id, code, out, errs)
	}
	if _, out, _ := keys("list"); strings.Contains(out, "from-cli") {
		t.Fatalf("revoked key still listed: %s", out)
	}
	if code, _, _ := keys("revoke", id); code == 0 {
		t.Fatal("revoking twice succeeded")
	}
}

// TestServeNeverStoresRawKeys: neither the database files nor the logs (apart from the two
// bootstrap lines) ever hold a raw key.
func TestServeNeverStoresRawKeys(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	env := serveEnv(dir)
	env["LOG_LEVEL"] = "debug"
	p := start(t, env, "serve")
	id, raw := newKey(t, p, `{"name":"secret","scopes":["*"]}`)
	wantStatus(t, p, raw, "GET", "/api/v1/agents", nil, 200, "")
	// An Idempotency-Key must not make the server keep the response, which holds the raw key.
	status, made := keyCall(t, p, p.Key, "POST", "/api/v1/api-keys", `{"name":"retry","scopes":["*"]}`, map[string]string{"Idempotency-Key": "k1"})
	if status != 201 {
		t.Fatalf("create with Idempotency-Key: %d %v", status, made)
	}
	retried := made["data"].(map[string]any)["key"].(string)
	out := wantStatus(t, p, p.Key, "POST", "/api/v1/api-keys/"+id+"/rotate", nil, 200, "")
	rotated := out["data"].(map[string]any)["key"].(string)
	wantStatus(t, p, rotated, "GET", "/api/v1/agents", nil, 200, "")
	wantStatus(t, p, "ap_"+strings.Repeat("Z", 40), "GET", "/api/v1/agents", nil, 401, "")
	secrets := []string{p.Key, raw, rotated, retried}
	check := func(when string) {
		files, _ := filepath.Glob(filepath.Join(dir, "agentplane.db*"))
		if len(files) == 0 {
			t.Fatalf("%s: no database files in %s", when, dir)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				if strings.Contains(string(b), s) {
					t.Fatalf("%s: %s holds a raw key", when, filepath.Base(f))
				}
			}
		}
		logs := p.Logs()
		var kept []string
		lines := strings.Split(logs, "\n")
		for i, line := range lines {
			if strings.Contains(line, bootstrapMarker) || (i > 0 && strings.Contains(lines[i-1], bootstrapMarker)) {
				continue
			}
			kept = append(kept, line)
		}
		rest := strings.Join(kept, "\n")
		for _, s := range secrets {
			if strings.Contains(rest, s) {
				t.Fatalf("%s: the logs hold a raw key:\n%s", when, rest)
			}
		}
		if !strings.Contains(logs, p.Key) {
			t.Fatalf("%s: the bootstrap key is not in the logs at all", when)
		}
	}
	check("running")
	p.stop(t)
	check("stopped")
}
