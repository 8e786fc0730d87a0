package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// loggedIn logs the CLI in to tg with a config file of its own and returns the environment
// of the commands that follow.
func loggedIn(t *testing.T, tg *target) map[string]string {
	t.Helper()
	env := map[string]string{"AGENTPLANE_CONFIG": filepath.Join(t.TempDir(), "agentplane", "config.json")}
	want(t, agentplane(t, env, tg.Key+"\n", "login", "--url", tg.URL), 0, "login")
	return env
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

// TestLoginWithEmail: a user of serve signs in with email and password (on stdin or from a
// file) and the CLI stores an API key made for it in the chosen workspace, never the
// password; a wrong password, a member's role, several workspaces without --workspace and the
// emulator are clear errors that write no config file.
func TestLoginWithEmail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tg := serveTarget(t)
	emu := emulatorTarget(t)
	const password = "correct horse battery"
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := map[string]string{"DATA_DIR": tg.dataDir}
	want(t, agentplane(t, admin, "", "users", "create", "--email", "ada@example.com", "--password-file", pw), 0, "create an owner")
	want(t, agentplane(t, admin, "", "users", "create", "--email", "max@example.com", "--password-file", pw, "--role", "member"), 0, "create a member")
	path := filepath.Join(t.TempDir(), "agentplane", "config.json")
	env := map[string]string{"AGENTPLANE_CONFIG": path}
	noConfig := func(what string) {
		t.Helper()
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("%s wrote the config file: %v", what, err)
		}
	}

	r := want(t, agentplane(t, env, "not the password\n", "login", "--url", tg.URL, "--email", "ada@example.com"), 1, "a wrong password")
	if !strings.Contains(r.stderr, "wrong email or password") {
		t.Errorf("stderr %q", r.stderr)
	}
	noConfig("a wrong password")
	r = want(t, agentplane(t, env, password+"\n", "login", "--url", tg.URL, "--email", "max@example.com"), 1, "a member")
	if !strings.Contains(r.stderr, "may not create API keys") || !strings.Contains(r.stderr, "member") {
		t.Errorf("stderr %q", r.stderr)
	}
	noConfig("a member's login")
	want(t, agentplane(t, env, "", "login", "--url", emu.URL, "--email", "ada@example.com", "--password-file", pw), 2, "--email on the emulator")
	want(t, agentplane(t, env, "", "login", "--url", tg.URL, "--email", "ada@example.com", "--password-file", pw, "--api-key-file", pw), 2, "--email with --api-key-file")
	want(t, agentplane(t, env, "", "login", "--url", tg.URL, "--password-file", pw), 2, "--password-file without --email")
	want(t, agentplane(t, env, "", "login", "--url", tg.URL, "--email", "ada@example.com", "--password-file", pw, "--workspace", "nope"), 2, "a workspace not hers")

	// The owner signs in with the password piped on stdin.
	r = want(t, agentplane(t, env, password+"\n", "login", "--url", tg.URL, "--email", "ada@example.com", "-o", "json"), 0, "the owner's login")
	out := decodeJSON[map[string]string](t, r.stdout)
	if !strings.HasPrefix(out["api_key"], "agentplane CLI on ") || !strings.Contains(out["api_key"], "ada@example.com") {
		t.Fatalf("login output %v", out)
	}
	raw, err := os.ReadFile(path)
	if err != nil || strings.Contains(string(raw), password) || !strings.Contains(string(raw), `"ap_`) {
		t.Fatalf("config file %s: %v", raw, err)
	}
	if _, err := tg.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "Only in default", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	if r = want(t, agentplane(t, env, "", "agents", "list"), 0, "agents list with the CLI's key"); !strings.Contains(r.stdout, "Only in default") {
		t.Errorf("agents list: %s", r.stdout)
	}
	keys, err := tg.C.APIKeyList(ctx, client.ListAPIKeysParams{Limit: 100})
	if err != nil || keys.Pagination.Total != 2 {
		t.Fatalf("keys: %+v %v", keys, err)
	}

	// In a second workspace too, she must say which.
	tok, err := tg.C.Login(ctx, "ada@example.com", password)
	if err != nil || len(tok.Workspaces) != 1 {
		t.Fatalf("login: %+v %v", tok, err)
	}
	if st, body, _, err := client.New(tg.URL, client.WithBearer(tok.Token)).Raw(ctx, http.MethodPost, "/api/v1/workspaces", []byte(`{"name":"Second","slug":"second"}`), nil); err != nil || st != 201 {
		t.Fatalf("create a workspace: %d %s %v", st, body, err)
	}
	r = want(t, agentplane(t, env, "", "login", "--url", tg.URL, "--email", "ada@example.com", "--password-file", pw), 2, "several workspaces")
	if !strings.Contains(r.stderr, "second") || !strings.Contains(r.stderr, "--workspace") {
		t.Errorf("stderr %q", r.stderr)
	}
	want(t, agentplane(t, env, "", "login", "--profile", "second", "--url", tg.URL, "--email", "ada@example.com", "--password-file", pw, "--workspace", "second"), 0, "login to the second workspace")
	r = want(t, agentplane(t, env, "", "agents", "list", "--profile", "second", "-o", "json"), 0, "agents of the second workspace")
	if strings.Contains(r.stdout, "Only in default") {
		t.Errorf("the second workspace lists agents of the first: %s", r.stdout)
	}
}

// TestLoginConfigFile: login checks the server and key, stores them with mode 0600 in a 0700
// directory, under profiles; the environment overrides the file; logout removes a profile.
func TestLoginConfigFile(t *testing.T) {
	t.Parallel()
	tg := serveTarget(t)
	emu := emulatorTarget(t)
	if _, err := tg.C.AgentCreate(context.Background(), client.AgentCreateRequest{Name: "on serve", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "conf")
	path := filepath.Join(dir, "agentplane", "config.json")
	env := map[string]string{"XDG_CONFIG_HOME": dir}

	r := want(t, agentplane(t, env, "", "agents", "list"), 2, "a command before any login")
	if !strings.Contains(r.stderr, "agentplane login") {
		t.Fatalf("the error does not say how to log in: %s", r)
	}
	want(t, agentplane(t, env, "", "login"), 2, "login without --url")
	want(t, agentplane(t, env, "", "login", "--url", "ftp://x"), 2, "login to a non-http URL")
	want(t, agentplane(t, env, "", "login", "--url", tg.URL), 2, "login to serve with no key on stdin")
	r = want(t, agentplane(t, env, "ap_"+strings.Repeat("Z", 40)+"\n", "login", "--url", tg.URL), 1, "login with a wrong key")
	if !strings.Contains(r.stderr, "refused the key") {
		t.Fatalf("wrong key: %s", r)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a failed login wrote the config file: %v", err)
	}

	want(t, agentplane(t, env, tg.Key+"\n", "login", "--url", tg.URL+"/"), 0, "login to serve")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Fatalf("config file mode %04o, want 0600", perm)
	}
	if d, _ := os.Stat(filepath.Dir(path)); d.Mode().Perm() != 0o700 {
		t.Fatalf("config directory mode %04o, want 0700", d.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	cfg := decodeJSON[struct {
		Current  string
		Profiles map[string]struct {
			URL    string `json:"url"`
			APIKey string `json:"api_key"`
		}
	}](t, string(raw))
	if cfg.Current != "default" || cfg.Profiles["default"].URL != tg.URL || cfg.Profiles["default"].APIKey != tg.Key {
		t.Fatalf("config: %s", raw)
	}
	// A second server under its own profile becomes the current one; --profile picks either.
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("anything\n"), 0o600)
	r = want(t, agentplane(t, env, "", "login", "--profile", "local", "--url", emu.URL, "--api-key-file", keyFile, "-o", "json"), 0, "login to the emulator")
	if out := decodeJSON[map[string]string](t, r.stdout); out["profile"] != "local" || out["mode"] != "emulator" || out["config"] != path {
		t.Fatalf("login -o json: %s", r)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Fatalf("config file mode %04o after a second login", info.Mode().Perm())
	}
	health := func(env map[string]string, args ...string) string {
		r := want(t, agentplane(t, env, "", append(args, "agents", "list", "-o", "json")...), 0, "agents list")
		l := decodeJSON[client.List[client.Agent]](t, r.stdout)
		return l.Data[0].WorkspaceID
	}
	emuWS, serveWS := health(env), health(env, "--profile", "default")
	if emuWS == serveWS {
		t.Fatalf("both profiles reach workspace %s", emuWS)
	}
	// AGENTPLANE_URL and AGENTPLANE_API_KEY override the profile.
	over := map[string]string{"XDG_CONFIG_HOME": dir, "AGENTPLANE_URL": tg.URL, "AGENTPLANE_API_KEY": tg.Key}
	if ws := health(over); ws != serveWS {
		t.Fatalf("AGENTPLANE_URL did not override the profile: %s", ws)
	}
	bad := map[string]string{"XDG_CONFIG_HOME": dir, "AGENTPLANE_PROFILE": "default", "AGENTPLANE_API_KEY": "ap_" + strings.Repeat("Y", 40)}
	if r := want(t, agentplane(t, bad, "", "agents", "list"), 1, "a bad AGENTPLANE_API_KEY"); !strings.Contains(r.stderr, "401") {
		t.Fatalf("bad key: %s", r)
	}
	// No config file at all: the environment alone.
	bare := map[string]string{"AGENTPLANE_CONFIG": filepath.Join(t.TempDir(), "none.json"), "AGENTPLANE_URL": tg.URL, "AGENTPLANE_API_KEY": tg.Key}
	if ws := health(bare); ws != serveWS {
		t.Fatal("the environment alone did not reach serve")
	}
	// AGENTPLANE_URL naming another server: the profile's key is not sent there.
	seen := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.Header.Get("X-API-Key") + "|" + r.Header.Get("User-Agent"):
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[],"message":"","pagination":{"page":1,"limit":20,"total":0,"total_pages":0,"pages":0}}`)
	}))
	defer other.Close()
	want(t, agentplane(t, map[string]string{"XDG_CONFIG_HOME": dir, "AGENTPLANE_PROFILE": "default", "AGENTPLANE_URL": other.URL}, "", "agents", "list"), 0, "list on another URL")
	if k := <-seen; k != "|agentplane-cli/dev" {
		t.Fatalf("the profile's key went to another server, or no User-Agent: %q", k)
	}
	want(t, agentplane(t, env, "", "agents", "list", "--profile", "nope"), 2, "an unknown profile")
	want(t, agentplane(t, env, "", "agents", "list", "-o", "yaml"), 2, "an unknown output format")

	// A config file others can read gets a warning.
	os.Chmod(path, 0o644)
	if r := want(t, agentplane(t, env, "", "agents", "list"), 0, "list"); !strings.Contains(r.stderr, "chmod 600") {
		t.Fatalf("no warning about mode 0644: %s", r)
	}
	os.Chmod(path, 0o600)

	want(t, agentplane(t, env, "", "logout", "--profile", "local"), 0, "logout local")
	want(t, agentplane(t, env, "", "logout", "--profile", "local"), 1, "logout twice")
	raw, _ = os.ReadFile(path)
	if strings.Contains(string(raw), emu.URL) || !strings.Contains(string(raw), tg.Key) {
		t.Fatalf("after logout local: %s", raw)
	}
	want(t, agentplane(t, env, "", "logout", "--all"), 0, "logout --all")
	raw, _ = os.ReadFile(path)
	if strings.Contains(string(raw), tg.Key) {
		t.Fatalf("the key is still in the file after logout --all: %s", raw)
	}
	want(t, agentplane(t, env, "", "agents", "list"), 2, "a command after logout")
}

// TestClientCommands drives every client command against the emulator and serve (SQLite),
// checking what they print and their exit statuses.
func TestClientCommands(t *testing.T) {
	t.Parallel()
	for _, mk := range []func(*testing.T) *target{emulatorTarget, serveTarget} {
		tg := mk(t)
		t.Run(tg.name, func(t *testing.T) { clientCommands(t, tg) })
	}
}

func clientCommands(t *testing.T, tg *target) {
	env := loggedIn(t, tg)
	ctx := context.Background()
	cfgFile := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(cfgFile, []byte(`{"model":"gpt-4o-mini","system_prompt":"You help.","simulation":{"latency_ms":20}}`), 0o600)

	// agents create | get | list | versions | promote
	r := want(t, agentplane(t, env, "", "agents", "create", "--name", "cli helper", "--config", "@"+cfgFile, "-o", "json"), 0, "agents create")
	a := decodeJSON[client.Agent](t, r.stdout)
	if a.Name != "cli helper" || a.Config == nil || a.Config.SystemPrompt != "You help." || a.ActiveVersion == nil || *a.ActiveVersion != 1 {
		t.Fatalf("created: %+v", a)
	}
	r = want(t, agentplane(t, env, "", "agents", "get", "cli helper"), 0, "agents get by name")
	if !strings.Contains(r.stdout, a.ID) || !strings.Contains(r.stdout, "You help.") || strings.Contains(r.stdout, "\x1b[") {
		t.Fatalf("agents get: %s", r)
	}
	want(t, agentplane(t, env, "", "agents", "get", a.ID, "-o", "json"), 0, "agents get by id")
	want(t, agentplane(t, env, "", "agents", "get", "no such agent"), 1, "agents get of a missing agent")
	r = want(t, agentplane(t, env, "", "agents", "list", "-q", "cli helper"), 0, "agents list")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], a.ID) {
		t.Fatalf("agents list: %s", r)
	}
	v2, err := tg.C.AgentVersionCreate(ctx, a.ID, client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You help, v2."}, "second")
	if err != nil {
		t.Fatal(err)
	}
	r = want(t, agentplane(t, env, "", "agents", "versions", "cli helper"), 0, "agents versions")
	if !strings.Contains(r.stdout, v2.ID) || !strings.Contains(r.stdout, "second") {
		t.Fatalf("versions: %s", r)
	}
	want(t, agentplane(t, env, "", "agents", "promote", "cli helper", "2"), 0, "agents promote")
	if got, _ := tg.C.AgentGet(ctx, a.ID); got.ActiveVersionID == nil || *got.ActiveVersionID != v2.ID {
		t.Fatalf("promote did not take: %+v", got)
	}
	want(t, agentplane(t, env, "", "agents", "promote", "cli helper", "9"), 1, "promote a missing version")
	want(t, agentplane(t, env, "", "agents", "promote", "cli helper"), 2, "promote without a version")
	want(t, agentplane(t, env, "", "agents", "create"), 2, "create without --name")
	if r := want(t, agentplane(t, env, "", "agents", "create", "--name", "x", "--config", `{"modle":"gpt-4o-mini"}`), 2, "a config with an unknown field"); !strings.Contains(r.stderr, "modle") {
		t.Fatalf("unknown config field: %s", r)
	}
	want(t, agentplane(t, env, "", "agents", "create", "--name", "x", "--model", "no-such-model"), 1, "a config the server refuses (422)")
	want(t, agentplane(t, env, "", "agents", "frob"), 2, "an unknown subcommand")

	// run: content streams to stdout and equals the output; source recorded.
	r = want(t, agentplane(t, env, "", "run", "cli helper", "--input", `{"message":"hello from the cli"}`), 0, "run")
	xs, err := tg.C.ExecutionList(ctx, client.ListExecutionsParams{AgentID: a.ID})
	if err != nil || len(xs.Data) != 1 {
		t.Fatalf("executions of the agent: %+v %v", xs, err)
	}
	x := xs.Data[0]
	text := outputOf(&x)
	if x.Status != "completed" || text == "" || r.stdout != text+"\n" {
		t.Fatalf("run printed %q; the execution's output is %s", r.stdout, x.Output)
	}
	if x.Metadata["source"] != "cli" || x.Source != "api" || *x.AgentVersionID != v2.ID {
		t.Fatalf("run recorded source %q metadata %v version %v", x.Source, x.Metadata, *x.AgentVersionID)
	}
	if !strings.Contains(r.stderr, "completed") || !strings.Contains(r.stderr, x.ID) {
		t.Fatalf("run's stderr: %s", r)
	}
	if strings.ContainsAny(r.stderr+r.stdout, "\x1b⠋") {
		t.Fatalf("a spinner or colours off a terminal: %q %q", r.stdout, r.stderr)
	}
	// --version by number, input from a file, -o json prints the execution.
	in := filepath.Join(t.TempDir(), "in.json")
	os.WriteFile(in, []byte(`{"message":"from a file"}`), 0o600)
	r = want(t, agentplane(t, env, "", "run", a.ID, "--input", "@"+in, "--version", "1", "-o", "json"), 0, "run --version 1")
	got := decodeJSON[client.Execution](t, r.stdout)
	if got.Status != "completed" || got.AgentVersionID == nil || *got.AgentVersionID != *a.ActiveVersionID || got.Input["message"] != "from a file" {
		t.Fatalf("run --version 1 -o json: %+v", got)
	}
	r = want(t, agentplane(t, env, `{"message":"stdin"}`, "run", "cli helper", "--input", "@-", "--async"), 0, "run --async")
	id := strings.TrimSpace(r.stdout)
	if x, err := tg.C.Wait(ctx, id, 10*time.Millisecond, false); err != nil || x.Status != "completed" || x.Input["message"] != "stdin" {
		t.Fatalf("async run %q: %+v %v", id, x, err)
	}
	r = want(t, agentplane(t, env, "", "executions", "tail", id), 0, "tail a completed run")
	if x, _ := tg.C.ExecutionGet(ctx, id); r.stdout != outputOf(x)+"\n" {
		t.Fatalf("tail printed %q", r.stdout)
	}
	want(t, agentplane(t, env, "", "run"), 2, "run without an agent")
	want(t, agentplane(t, env, "", "run", "cli helper", "--input", "{nope"), 2, "run with bad JSON")
	want(t, agentplane(t, env, "", "run", "cli helper", "--input", "[1]"), 2, "run with an array")
	want(t, agentplane(t, env, "", "run", "cli helper", "--bogus"), 2, "run with an unknown flag")
	want(t, agentplane(t, env, "", "run", "no such agent"), 1, "run a missing agent")

	// A failing run exits 1 with the error on stderr.
	os.WriteFile(cfgFile, []byte(`{"model":"gpt-4o-mini","simulation":{"fail":true,"fail_message":"provider exploded"}}`), 0o600)
	want(t, agentplane(t, env, "", "agents", "create", "--name", "cli failing", "--config", "@"+cfgFile), 0, "create failing")
	r = want(t, agentplane(t, env, "", "run", "cli failing"), 1, "a failing run")
	if !strings.Contains(r.stderr, "provider exploded") {
		t.Fatalf("failing run: %s", r)
	}

	// Approval: run exits 3; tail too; approve resumes it (tail 0); deny ends it (tail 1).
	os.WriteFile(cfgFile, []byte(`{"model":"gpt-4o-mini","approval":{"checkpoints":[{"name":"review","when":"before_output"}]}}`), 0o600)
	want(t, agentplane(t, env, "", "agents", "create", "--name", "cli approval", "--type", "approval", "--config", "@"+cfgFile), 0, "create approval agent")
	r = want(t, agentplane(t, env, "", "run", "cli approval", "--input", `{"message":"refund 200 dollars"}`), 3, "a run at a checkpoint")
	if !strings.Contains(r.stderr, "awaiting approval") || !strings.Contains(r.stderr, "executions approve") {
		t.Fatalf("awaiting run: %s", r)
	}
	waiting := lastExecution(t, env, "cli approval")
	if waiting.Status != "awaiting_approval" {
		t.Fatalf("status %s", waiting.Status)
	}
	want(t, agentplane(t, env, "", "executions", "tail", waiting.ID), 3, "tail of an awaiting run")
	r = want(t, agentplane(t, env, "", "executions", "approve", waiting.ID, "--comment", "fine"), 0, "approve")
	if !strings.Contains(r.stdout, waiting.ID) {
		t.Fatalf("approve: %s", r)
	}
	want(t, agentplane(t, env, "", "executions", "tail", waiting.ID), 0, "tail of the approved run")
	want(t, agentplane(t, env, "", "executions", "approve", waiting.ID), 1, "approve twice (409)")
	want(t, agentplane(t, env, "", "run", "cli approval", "--input", `{"message":"refund 9000"}`), 3, "a second run at a checkpoint")
	denied := lastExecution(t, env, "cli approval")
	want(t, agentplane(t, env, "", "executions", "deny", denied.ID, "--reason", "too much"), 0, "deny")
	if r := want(t, agentplane(t, env, "", "executions", "tail", denied.ID), 1, "tail of a denied run"); !strings.Contains(r.stderr, "rejected") {
		t.Fatalf("denied tail: %s", r)
	}
	want(t, agentplane(t, env, "", "run", "cli approval", "--input", `{"message":"refund 1"}`), 3, "a third run at a checkpoint")
	third := lastExecution(t, env, "cli approval")
	// approve --show lists what waits (a checkpoint: no calls); decisions for calls that are
	// not pending are refused by the server, malformed ones by the CLI.
	r = want(t, agentplane(t, env, "", "executions", "approve", third.ID, "--show", "-o", "json"), 0, "approve --show")
	if ap := decodeJSON[client.Approval](t, r.stdout); ap.ExecutionID != third.ID || ap.Kind != "checkpoint" || ap.Status != "pending" {
		t.Fatalf("approve --show: %s", r)
	}
	if r = want(t, agentplane(t, env, "", "executions", "approve", third.ID, "--reject", "call_9=no"), 1, "reject at a checkpoint"); !strings.Contains(r.stderr, "decisions") {
		t.Fatalf("reject at a checkpoint: %s", r)
	}
	want(t, agentplane(t, env, "", "executions", "approve", third.ID, "--edit", "call_9={bad"), 2, "edit with bad JSON")
	r = want(t, agentplane(t, env, "", "executions", "cancel", third.ID), 0, "cancel")
	if !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("cancel: %s", r)
	}
	want(t, agentplane(t, env, "", "executions", "tail", third.ID), 1, "tail of a cancelled run")
	want(t, agentplane(t, env, "", "executions", "cancel", third.ID), 1, "cancel twice (409)")

	// executions list | get
	r = want(t, agentplane(t, env, "", "executions", "list", "--agent", "cli approval", "--status", "rejected", "-o", "json"), 0, "executions list")
	l := decodeJSON[client.List[client.Execution]](t, r.stdout)
	if len(l.Data) != 1 || l.Data[0].ID != denied.ID || l.Pagination.Total != 1 {
		t.Fatalf("list of rejected runs: %+v", l)
	}
	r = want(t, agentplane(t, env, "", "executions", "list", "--agent", "cli helper"), 0, "executions list table")
	if !strings.Contains(r.stdout, "api/cli") || !strings.Contains(r.stdout, "completed") || !strings.Contains(r.stdout, "cli helper") ||
		strings.Contains(r.stdout, a.ID) {
		t.Fatalf("executions table (agents by name): %s", r)
	}
	r = want(t, agentplane(t, env, "", "executions", "get", denied.ID), 0, "executions get")
	if !strings.Contains(r.stdout, "rejected") || !strings.Contains(r.stdout, "too much") {
		t.Fatalf("executions get: %s", r)
	}
	want(t, agentplane(t, env, "", "executions", "get", "2rfFt6qa0UQfFHDSW7MvKn0cZZZ"), 1, "get a missing execution")

	// traces get, by trace id and by execution id
	r = want(t, agentplane(t, env, "", "traces", "get", x.TraceID), 0, "traces get")
	if !strings.Contains(r.stdout, "model call") || !strings.Contains(r.stdout, x.ID) {
		t.Fatalf("traces get: %s", r)
	}
	r = want(t, agentplane(t, env, "", "traces", "get", x.ID, "-o", "json"), 0, "traces get by execution")
	if tr := decodeJSON[client.TraceDetail](t, r.stdout); tr.ID != x.TraceID || len(tr.Spans) == 0 {
		t.Fatalf("trace by execution id: %+v", tr)
	}
	want(t, agentplane(t, env, "", "traces", "get", "2rfFt6qa0UQfFHDSW7MvKn0cZZZ"), 1, "a missing trace")

	// chat, with stdin as the conversation
	r = want(t, agentplane(t, env, "hello chat\n\n/history\n/nope\nsecond message\n/exit\nnever sent\n", "chat", "cli helper"), 0, "chat")
	sessions, _ := tg.C.ChatSessionList(ctx, client.ListChatSessionsParams{AgentID: a.ID})
	if len(sessions.Data) != 1 || sessions.Data[0].Metadata["source"] != "cli" || sessions.Data[0].MessageCount != 4 {
		t.Fatalf("chat session: %+v", sessions.Data)
	}
	msgs, _ := tg.C.ChatMessageList(ctx, sessions.Data[0].ID, client.ListChatMessagesParams{})
	if !strings.Contains(r.stdout, msgs.Data[1].Content+"\n") || !strings.Contains(r.stdout, msgs.Data[3].Content+"\n") ||
		!strings.Contains(r.stdout, "  1  hello chat\n") || strings.Contains(r.stdout, "never sent") {
		t.Fatalf("chat printed:\n%s\nmessages: %+v", r, msgs.Data)
	}
	if !strings.Contains(r.stderr, "unknown command /nope") {
		t.Fatalf("chat stderr: %s", r)
	}
	hist, err := os.Stat(filepath.Join(filepath.Dir(env["AGENTPLANE_CONFIG"]), "history"))
	if err != nil || hist.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v %v", hist, err)
	}
	want(t, agentplane(t, env, "one more\n", "chat", "cli helper", "--session", sessions.Data[0].ID), 0, "chat --session")
	if s, _ := tg.C.ChatSessionGet(ctx, sessions.Data[0].ID); s.MessageCount != 6 {
		t.Fatalf("chat --session: %d messages, want 6", s.MessageCount)
	}
	want(t, agentplane(t, env, "", "chat", "cli failing", "--session", sessions.Data[0].ID), 2, "chat --session of another agent")
	want(t, agentplane(t, env, "", "chat", "cli helper"), 0, "chat ended by Ctrl-D at once")
	// Piped input whose replies all fail exits 1, each error printed with one prefix.
	r = want(t, agentplane(t, env, "hi\nagain\n", "chat", "cli failing"), 1, "chat whose every reply fails")
	if !strings.Contains(r.stderr, "provider exploded") || !strings.Contains(r.stderr, "2 of 2 messages") ||
		strings.Contains(r.stderr, "agentplane: agentplane:") {
		t.Fatalf("failing chat: %s", r)
	}
	r = want(t, agentplane(t, env, strings.Repeat("x", 100001)+"\n", "chat", "cli helper"), 1, "chat whose message the API refuses")
	if !strings.Contains(r.stderr, "agentplane: 422") || strings.Contains(r.stderr, "agentplane: agentplane:") {
		t.Fatalf("refused chat message: %s", r)
	}
	want(t, agentplane(t, env, "", "chat"), 2, "chat without an agent")

	// credentials add (the value from stdin) | list | validate | delete
	r = want(t, agentplane(t, env, "sk-cli-secret-value-1234\n", "credentials", "add", "--provider", "openai_compatible",
		"--base-url", "http://127.0.0.1:1/v1", "--value", "-", "-o", "json"), 0, "credentials add")
	cred := decodeJSON[client.Credential](t, r.stdout)
	if cred.Name != "openai_compatible" || cred.Provider != "openai_compatible" || cred.Metadata["base_url"] != "http://127.0.0.1:1/v1" ||
		strings.Contains(r.stdout, "sk-cli-secret-value-1234") {
		t.Fatalf("credentials add: %s", r)
	}
	r = want(t, agentplane(t, env, "", "credentials", "list", "--provider", "openai_compatible"), 0, "credentials list")
	if !strings.Contains(r.stdout, cred.ID) || !strings.Contains(r.stdout, cred.MaskedValue) || strings.Contains(r.stdout, "sk-cli-secret-value-1234") {
		t.Fatalf("credentials list: %s", r)
	}
	// Both targets answer with the simulated model, which validates without calling anyone.
	if r := want(t, agentplane(t, env, "", "credentials", "validate", cred.ID), 0, "credentials validate"); !strings.Contains(r.stdout, "valid: true") {
		t.Fatalf("credentials validate: %s", r)
	}
	want(t, agentplane(t, env, "", "credentials", "add", "--provider", "openai"), 2, "credentials add without a value")
	want(t, agentplane(t, env, "", "credentials", "delete", cred.ID), 0, "credentials delete")
	want(t, agentplane(t, env, "", "credentials", "delete", cred.ID), 1, "credentials delete twice")

	// keys: only on serve (the emulator has no auth)
	if tg.Key == "" {
		return
	}
	r = want(t, agentplane(t, env, "", "keys", "create", "--name", "cli made", "--scopes", "agents:read"), 0, "keys create")
	raw := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(raw, "ap_") || !strings.Contains(r.stderr, "not be shown again") {
		t.Fatalf("keys create: %s", r)
	}
	reader := map[string]string{"AGENTPLANE_CONFIG": env["AGENTPLANE_CONFIG"], "AGENTPLANE_API_KEY": raw}
	want(t, agentplane(t, reader, "", "agents", "list"), 0, "the new key reads agents")
	if r := want(t, agentplane(t, reader, "", "run", "cli helper"), 1, "the new key may not run"); !strings.Contains(r.stderr, "403") {
		t.Fatalf("scoped key: %s", r)
	}
	r = want(t, agentplane(t, env, "", "keys", "list"), 0, "keys list")
	if !strings.Contains(r.stdout, "cli made") || !strings.Contains(r.stdout, "bootstrap") || strings.Contains(r.stdout, raw) || strings.Contains(r.stdout, tg.Key) {
		t.Fatalf("keys list: %s", r)
	}
	keys := decodeJSON[client.List[client.APIKey]](t, want(t, agentplane(t, env, "", "keys", "list", "-o", "json"), 0, "keys list json").stdout)
	var kid string
	for _, k := range keys.Data {
		if k.Name == "cli made" {
			kid = k.ID
		}
	}
	want(t, agentplane(t, env, "", "keys", "create", "--name", "x", "--scopes", "agents:fly"), 1, "keys create with a bad scope (422)")
	want(t, agentplane(t, env, "", "keys", "create"), 2, "keys create without --name")
	r = want(t, agentplane(t, env, "", "keys", "list", "--data-dir", "x"), 2, "keys with a database flag")
	if !strings.Contains(r.stderr, "admin keys") {
		t.Fatalf("database flag hint: %s", r)
	}
	want(t, agentplane(t, env, "", "keys", "revoke", kid), 0, "keys revoke")
	want(t, agentplane(t, reader, "", "agents", "list"), 1, "a revoked key")
	want(t, agentplane(t, env, "", "keys", "revoke", kid), 1, "revoke twice")
}

// outputOf is the text of a plain reply's output.
func outputOf(x *client.Execution) string {
	var out struct {
		Content string `json:"content"`
	}
	json.Unmarshal(x.Output, &out)
	return out.Content
}

// lastExecution is the newest execution of an agent, read through the CLI.
func lastExecution(t *testing.T, env map[string]string, agent string) client.Execution {
	t.Helper()
	r := want(t, agentplane(t, env, "", "executions", "list", "--agent", agent, "--limit", "1", "-o", "json"), 0, "executions list")
	l := decodeJSON[client.List[client.Execution]](t, r.stdout)
	if len(l.Data) != 1 {
		t.Fatalf("no execution of %s", agent)
	}
	return l.Data[0]
}
