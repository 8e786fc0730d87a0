package studio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/auth/authtest"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
	"github.com/agentplane/agentplane/internal/store"
)

// chromiumPath is Debian's chromium package; AGENTPLANE_CHROMIUM overrides it.
func chromiumPath() string {
	if p := os.Getenv("AGENTPLANE_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// browser is one headless Chromium tab, recording console errors and uncaught exceptions.
type browser struct {
	t      *testing.T
	ctx    context.Context
	base   string
	mu     sync.Mutex
	errors []string
	shots  string
}

// shared is the one headless Chromium of the package, started by the first test that needs
// it and closed by TestMain: launching Chromium cost each test seconds of CPU, and a browser
// context of its own per test (newBrowser) isolates the tests as a fresh profile did.
var shared struct {
	once        sync.Once
	ctx         context.Context // the browser's first tab; its children are new tabs
	cancel      func()
	cancelAlloc func()
	dir         string // the profile, removed by TestMain
	err         error
}

// closeSharedBrowser stops the package's Chromium and removes its profile (TestMain).
func closeSharedBrowser() {
	if shared.cancel != nil {
		shared.cancel()
		shared.cancelAlloc()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// sharedBrowser starts the package's Chromium on first use.
func sharedBrowser(exe string) (context.Context, error) {
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "agentplane-chromium-"); shared.err != nil {
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(exe),
			chromedp.Flag("headless", true),
			chromedp.Flag("no-sandbox", true),
			chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("no-first-run", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.UserDataDir(shared.dir),
			chromedp.WindowSize(1280, 1000),
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(actx)
		// The first Run starts the browser and binds it to ctx (not to a test's context).
		if _, shared.err = chromedp.Run(ctx, chromedp.Evaluate[bool]("true")); shared.err != nil {
			cancel()
			cancelAlloc()
			return
		}
		shared.ctx, shared.cancel, shared.cancelAlloc = ctx, cancel, cancelAlloc
	})
	return shared.ctx, shared.err
}

// newBrowser opens a tab in a browser context of its own (its own cookies and storage, as a
// fresh profile) of the package's headless Chromium. Without the chromium binary the test is
// skipped, unless AGENTPLANE_REQUIRE_BROWSER=1 (as in CI), where it fails.
func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	exe := chromiumPath()
	if _, err := os.Stat(exe); err != nil {
		if os.Getenv("AGENTPLANE_REQUIRE_BROWSER") == "1" {
			t.Fatalf("AGENTPLANE_REQUIRE_BROWSER=1 but %s is missing: apt-get install -y chromium", exe)
		}
		t.Skipf("browser tests skipped: %s not found (apt-get install -y chromium, or set AGENTPLANE_CHROMIUM)", exe)
	}
	root, err := sharedBrowser(exe)
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelTab := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelTab)
	b := &browser{t: t, ctx: ctx, base: base, shots: shotDir(t)}
	err = chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				msg = "console.error: " + strings.Join(parts, " ")
			}
		case *cdpruntime.EventExceptionThrown:
			msg = "uncaught: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				msg = "log: " + ev.Entry.Text + " " + ev.Entry.URL
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.errors = append(b.errors, msg)
			b.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable the log domain: %v", err)
	}
	// Every tab behaves as the focused one, as the only tab of a browser did: the tests run
	// side by side, each in a window of its own.
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatalf("emulate focus: %v", err)
	}
	return b
}

// shotDir is where screenshots go: $TEST_ARTIFACTS/studio, else testdata/out next to this
// test (git-ignored).
func shotDir(t *testing.T) string {
	dir := filepath.Join("testdata", "out")
	if a := os.Getenv("TEST_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "studio")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (b *browser) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.shot("failure")
		b.t.Fatalf("browser: %v", err)
	}
}

// shot saves a screenshot named after the test and the step, and checks that every form
// control on the page has a label.
func (b *browser) shot(step string) {
	if step != "failure" {
		unlabelled, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('input, select, textarea')]
			.filter(el => !el.labels?.length && !el.getAttribute('aria-label')).map(el => el.id || el.outerHTML)`))
		if err != nil {
			b.t.Errorf("label check at %s: %v", step, err)
		} else if len(unlabelled) > 0 {
			b.t.Errorf("at %s, form controls without a label: %v", step, unlabelled)
		}
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", step, err)
		return
	}
	name := filepath.Join(b.shots, strings.NewReplacer("/", "-", " ", "_").Replace(b.t.Name())+"-"+step+".png")
	if err := os.WriteFile(name, png, 0o644); err != nil {
		b.t.Errorf("write screenshot: %v", err)
		return
	}
	b.t.Logf("screenshot: %s", name)
}

// until waits for a JavaScript expression to be true, looking every 20 ms: chromedp's default
// evaluates it on every animation frame, which keeps Chromium drawing 60 frames a second in
// every tab that waits.
func until(expr string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(20*time.Millisecond))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := poll(ctx, t); err != nil {
			return chromedp.Void{}, fmt.Errorf("waiting for %s: %w", expr, err)
		}
		return chromedp.Void{}, nil
	}
}

// hash moves the app to another page (a same-document navigation, which chromedp's
// Navigate would wait on for a load event that never comes).
func hash(h string) chromedp.Action[chromedp.Void] {
	set := chromedp.Evaluate[string](fmt.Sprintf("location.hash = %q", h))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := set(ctx, t)
		return chromedp.Void{}, err
	}
}

// get runs an action that returns a value (waiting at most a minute: a missing element fails
// the test instead of hanging it).
func get[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.shot("failure")
		b.t.Fatalf("browser: %v", err)
	}
	return v
}

// signIn opens Studio at base and signs in with email and password, until the agents list.
func (b *browser) signIn(base, email, password string) {
	b.t.Helper()
	b.run(
		chromedp.Navigate(base+"/studio"),
		chromedp.WaitVisible(chromedp.CSS("#login-email")),
		chromedp.SendKeys(chromedp.CSS("#login-email"), email),
		chromedp.SendKeys(chromedp.CSS("#login-password"), password),
		chromedp.Click(chromedp.CSS("#login-submit")),
		chromedp.WaitVisible(chromedp.CSS("#new-agent")),
	)
}

// text is the visible text of the first element matching a CSS selector.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return get(b, chromedp.Text(chromedp.CSS(sel)))
}

// js evaluates an expression in the page.
func js[T any](b *browser, expr string) T {
	b.t.Helper()
	return get(b, chromedp.Evaluate[T](expr))
}

// expectError drops the console errors that contain substr: a request the test makes fail on
// purpose is logged by the browser.
func (b *browser) expectError(substr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := b.errors[:0]
	for _, e := range b.errors {
		if !strings.Contains(e, substr) {
			kept = append(kept, e)
		}
	}
	b.errors = kept
}

// noConsoleErrors fails the test if the page logged an error or threw.
func (b *browser) noConsoleErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		b.t.Errorf("console errors:\n%s", strings.Join(b.errors, "\n"))
	}
}

// apiGet calls the API directly (not through the browser) to check what Studio did.
func apiGet(t *testing.T, base, path string, header http.Header) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func startServe(t *testing.T) (base, email, password string) {
	t.Helper()
	base, st := startServeStore(t)
	addUser(t, st, testEmail, testPassword, cli.DefaultWorkspaceID)
	return base, testEmail, testPassword
}

// startServeStore starts `serve` in-process on SQLite in a temp dir, with simulated models.
func startServeStore(t *testing.T) (string, *store.Store) {
	t.Helper()
	return startServeModels(t, cli.ModelsSimulated)
}

// startServeModels is startServeStore with the models (and tools) of --models. Its data
// directory starts with a copy of the template's migrated database (as a first start leaves
// it before it fills the default workspace): migrating it each time cost every test seconds
// of CPU under -race.
func startServeModels(t *testing.T, models string) (string, *store.Store) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dataDir := filepath.Dir(dbs.SQLiteFile(t))
	srv, err := cli.NewServer(context.Background(), log, io.Discard, cli.ServerConfig{DB: cli.ServerDB(dataDir, ""), Workers: 2, Models: models})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler)
	t.Cleanup(func() {
		srv.API.CloseStreams()
		ts.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(sctx)
	})
	return ts.URL, srv.Store
}

// startServeKey starts `serve` with the models (and tools) of --models and a user, and
// returns its base URL, its store, a "*" key of the default workspace and a client using it.
func startServeKey(t *testing.T, models string) (string, *store.Store, string, *client.Client) {
	t.Helper()
	base, st := startServeModels(t, models)
	addUser(t, st, testEmail, testPassword, cli.DefaultWorkspaceID)
	key := createKeyViaAPI(t, base, testEmail, testPassword)
	return base, st, key, client.New(base, client.WithAPIKey(key))
}

// The user startServe and startServeKey add.
const testEmail, testPassword = "ada@example.com", "correct horse battery"

// addUser creates a user who is an owner of the workspaces.
func addUser(t *testing.T, st *store.Store, email, password string, workspaces ...string) {
	t.Helper()
	ctx := context.Background()
	u, err := st.UserCreate(ctx, &domain.User{Email: email, PasswordHash: authtest.PasswordHash(t, password)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range workspaces {
		if err := st.MembershipAdd(ctx, ws, u.ID, "owner"); err != nil {
			t.Fatal(err)
		}
	}
}

func startEmulator(t *testing.T) string {
	t.Helper()
	emu, err := cli.NewEmulator(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), cli.EmulatorConfig{Seed: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(emu.Handler)
	t.Cleanup(func() {
		emu.API.CloseStreams()
		ts.Close()
		_ = emu.Close()
	})
	return ts.URL
}

// createAgent fills the new-agent form and waits for the agent's page.
func (b *browser) createAgent(name, typ, config string) {
	b.t.Helper()
	b.run(
		hash("#/agents/new"),
		chromedp.WaitVisible(chromedp.CSS("#agent-name")),
		chromedp.SendKeys(chromedp.CSS("#agent-name"), name),
		chromedp.SetValue(chromedp.CSS("#agent-type"), typ),
		chromedp.SetValue(chromedp.CSS("#agent-config"), config),
		chromedp.Click(chromedp.CSS("#agent-create")),
		until(fmt.Sprintf(`document.querySelector('h1')?.textContent === %q && !!document.querySelector('#run')`, name)),
	)
	b.shot("agent-" + typ)
}

// runInPlayground runs the selected version and waits for the run's final status.
func (b *browser) runInPlayground(input, wantStatus string) {
	b.t.Helper()
	b.run(
		chromedp.SetValue(chromedp.CSS("#run-input"), input),
		chromedp.Click(chromedp.CSS("#run")),
	)
	if wantStatus != "" {
		b.run(until(fmt.Sprintf(`document.querySelector('#run-status')?.textContent === %q`, wantStatus)))
	}
}

func TestStudioServe(t *testing.T) {
	t.Parallel()
	base, email, password := startServe(t)
	b := newBrowser(t, base)

	// Sign in with email and password; the one workspace is picked at once.
	b.run(
		chromedp.Navigate(base+"/studio"),
		chromedp.WaitVisible(chromedp.CSS("#login-email")),
	)
	b.shot("signin")
	b.run(
		chromedp.SendKeys(chromedp.CSS("#login-email"), email),
		chromedp.SendKeys(chromedp.CSS("#login-password"), password),
		chromedp.Click(chromedp.CSS("#login-submit")),
		chromedp.WaitVisible(chromedp.CSS("#new-agent")),
	)
	who := b.text("#who")
	if !strings.Contains(who, email) {
		t.Errorf("header shows %q, want the signed-in email", who)
	}
	b.shot("agents")

	// Create an agent and run it in the playground: streamed text, then tokens and cost.
	b.createAgent("Greeter", "simple", `{"model":"gpt-4o-mini","system_prompt":"Greet people."}`)
	b.runInPlayground(`{"message":"Hello from the browser"}`, "completed")
	out, tokens := b.text("#run-output .content"), b.text("#run-tokens")
	if strings.TrimSpace(out) == "" || strings.HasPrefix(out, "{") {
		t.Errorf("the playground showed %q, want the text streamed in content frames", out)
	}
	if strings.HasPrefix(tokens, "0 ") {
		t.Errorf("tokens = %q, want some", tokens)
	}
	b.shot("playground")

	// A run that cannot start says why in the summary, instead of "Starting…" forever.
	b.runInPlayground(`[1, 2]`, "")
	b.run(until(`!!document.querySelector('#run-summary #run-error')`))
	if got := b.text("#run-summary"); strings.Contains(got, "Starting") || !strings.Contains(got, "Not started") {
		t.Errorf("a failed start shows %q, want the error and no Starting…", got)
	}
	b.expectError("status of 400 (Bad Request)")

	// The run is recorded with source studio (checked through the API with a login token).
	token := js[string](b, `JSON.parse(sessionStorage.getItem('agentplane.studio')).token`)
	ws := js[string](b, `JSON.parse(sessionStorage.getItem('agentplane.studio')).workspace`)
	hdr := http.Header{"Authorization": {"Bearer " + token}, "X-Workspace-ID": {ws}}
	if status, body := apiGet(t, base, "/api/v1/executions?source=studio", hdr); status != 200 || body["pagination"].(map[string]any)["total"].(float64) != 1 {
		t.Errorf("executions with source studio: %d %v", status, body)
	}

	// An agent with an approval checkpoint pauses; the inbox approves it with a comment.
	b.createAgent("Gate", "approval", `{"model":"gpt-4o-mini","approval":{"checkpoints":[{"name":"review","when":"before_output"}]}}`)
	b.runInPlayground(`{"message":"needs a yes"}`, "")
	b.run(until(`!!document.querySelector('#run-summary .inbox')`))
	// Its page says it waits, offers cancel, and watches it live.
	b.run(
		chromedp.Click(chromedp.CSS(`#run-summary a[href^="#/executions/"]`)),
		chromedp.WaitVisible(chromedp.CSS("#cancel")),
		until(`document.querySelector('#x-status').textContent === 'awaiting approval' && !!document.querySelector('#h-live')`),
	)
	b.shot("awaiting")
	b.run(
		hash("#/approvals"),
		chromedp.WaitVisible(chromedp.CSS("section.approval button.approve")),
		chromedp.SendKeys(chromedp.CSS("section.approval textarea"), "Looks good"),
	)
	b.shot("inbox")
	b.run(
		chromedp.Click(chromedp.CSS("section.approval button.approve")),
		chromedp.WaitVisible(chromedp.CSS("#inbox-empty")),
	)
	_, appr := apiGet(t, base, "/api/v1/approvals?status=approved", hdr)
	if list, _ := appr["data"].([]any); len(list) != 1 || list[0].(map[string]any)["comment"] != "Looks good" {
		t.Errorf("approved approvals: %v", appr)
	}

	// Create a key: shown exactly once, works, then revoked it stops working.
	b.run(
		hash("#/keys"),
		chromedp.WaitVisible(chromedp.CSS("#key-name")),
		chromedp.SendKeys(chromedp.CSS("#key-name"), "ci-bot"),
		chromedp.Click(chromedp.CSS("#key-create")),
		chromedp.WaitVisible(chromedp.CSS("#new-key-value")),
	)
	key, html := b.text("#new-key-value"), get(b, chromedp.OuterHTML(chromedp.CSS("body")))
	if !strings.HasPrefix(key, "ap_") || len(key) != 43 {
		t.Fatalf("shown key %q is not a raw key", key)
	}
	if n := strings.Count(html, key); n != 1 {
		t.Errorf("the raw key appears %d times on the page, want exactly 1", n)
	}
	b.shot("key-created")
	keyHdr := http.Header{"X-API-Key": {key}}
	if status, _ := apiGet(t, base, "/api/v1/agents", keyHdr); status != 200 {
		t.Errorf("the new key answers %d, want 200", status)
	}
	b.run(
		chromedp.Click(chromedp.CSS("#key-done")),
		until(`!document.querySelector('#new-key-value') && !!document.querySelector('tr[data-key="ci-bot"]')`),
	)
	html = get(b, chromedp.OuterHTML(chromedp.CSS("html")))
	if strings.Contains(html, key) {
		t.Error("the raw key is still on the page after it was dismissed")
	}
	b.run(
		chromedp.Click(chromedp.CSS(`tr[data-key="ci-bot"] button.revoke`)),
		until(`document.querySelector('tr[data-key="ci-bot"] button.revoke').textContent.startsWith('Confirm')`),
		chromedp.Click(chromedp.CSS(`tr[data-key="ci-bot"] button.revoke`)),
		until(`!document.querySelector('tr[data-key="ci-bot"]')`),
	)
	b.shot("key-revoked")
	if status, _ := apiGet(t, base, "/api/v1/agents", keyHdr); status != 401 {
		t.Errorf("the revoked key answers %d, want 401", status)
	}

	// Executions: the list filters by source and the detail shows input and output.
	b.run(
		hash("#/executions?source=studio"),
		until(`document.querySelectorAll('tbody tr').length === 2`),
		chromedp.Click(chromedp.CSS(`tbody tr a`)),
		chromedp.WaitVisible(chromedp.CSS("#x-input")),
		until(`document.querySelectorAll('#waterfall tbody tr').length > 0`),
	)
	if name := b.text("#x-agent"); name != "Greeter" && name != "Gate" {
		t.Errorf("the execution's agent shows as %q, want its name", name)
	}
	// The waterfall draws every span of the tree GET /traces/{id} returns, not only the roots.
	execID := strings.TrimPrefix(js[string](b, `location.hash`), "#/executions/")
	_, xb := apiGet(t, base, "/api/v1/executions/"+execID, hdr)
	traceID, _ := xb["data"].(map[string]any)["trace_id"].(string)
	_, tb := apiGet(t, base, "/api/v1/traces/"+traceID, hdr)
	spanCount, _ := tb["data"].(map[string]any)["span_count"].(float64)
	if rows := js[float64](b, `document.querySelectorAll('#waterfall tbody tr').length`); spanCount < 2 || rows != spanCount {
		t.Errorf("the waterfall draws %v rows, want span_count %v (at least 2)", rows, spanCount)
	}
	b.run(
		chromedp.SendKeys(chromedp.CSS("#score-value"), "4"),
		chromedp.SendKeys(chromedp.CSS("#score-comment"), "clear answer"),
		chromedp.Click(chromedp.CSS("#score-add")),
		until(`document.querySelector('#scores tbody tr')?.textContent.includes('clear answer')`),
	)
	b.shot("execution")

	// Usage: charts drawn from the trace summary, the totals those of the API's summary.
	_, sum := apiGet(t, base, "/api/v1/traces/summary?window=24h&bucket=hour", hdr)
	runs := 0.0
	buckets, _ := lookupList(sum, "data", "buckets")
	for _, bk := range buckets {
		runs += bk.(map[string]any)["runs"].(float64)
	}
	b.run(
		hash("#/usage"),
		until(`document.querySelectorAll('#usage-runs svg rect').length > 0`),
		until(`document.querySelectorAll('#usage-latency svg circle').length > 0`),
		until(`document.querySelectorAll('#usage-tokens svg rect').length > 0 && document.querySelectorAll('#usage-cost svg rect').length > 0`),
	)
	if got := b.text("#usage-totals dd"); runs < 2 || got != strconv.Itoa(int(runs)) {
		t.Errorf("usage shows %q runs, the summary has %v", got, runs)
	}
	b.shot("usage")
	// Another window through the picker: the page follows the hash.
	js[bool](b, `(() => { const s = document.querySelector('#usage-window'); s.value = '7d'; return s.dispatchEvent(new Event('change')); })()`)
	b.run(until(`location.hash === '#/usage?window=7d' && document.querySelectorAll('#usage-runs svg rect').length > 0`))

	// Prompts: create one, then preview it with variables.
	b.run(
		hash("#/prompts"),
		chromedp.WaitVisible(chromedp.CSS("#prompt-name")),
		chromedp.SendKeys(chromedp.CSS("#prompt-name"), "Welcome"),
		chromedp.SetValue(chromedp.CSS("#prompt-template"), "Hi {{name}}, welcome to {{place}}."),
		chromedp.Click(chromedp.CSS("#prompt-create")),
		chromedp.WaitVisible(chromedp.CSS("#preview-vars")),
		chromedp.SetValue(chromedp.CSS("#preview-vars"), `{"name":"Ada"}`),
		chromedp.Click(chromedp.CSS("#preview")),
		until(`document.querySelector('#preview-out').textContent !== ''`),
	)
	if got := b.text("#preview-out"); !strings.Contains(got, "Hi Ada, welcome to .") || !strings.Contains(got, "missing: place") {
		t.Errorf("prompt preview %q", got)
	}
	b.shot("prompt")

	// Credentials: the value is shown masked, never raw.
	const secret = "sk-test-0123456789abcdefXYZW"
	b.run(
		hash("#/credentials"),
		chromedp.WaitVisible(chromedp.CSS("#cred-name")),
		chromedp.SendKeys(chromedp.CSS("#cred-name"), "openai-main"),
		chromedp.SendKeys(chromedp.CSS("#cred-provider"), "openai"),
		chromedp.SendKeys(chromedp.CSS("#cred-value"), secret),
		chromedp.Click(chromedp.CSS("#cred-create")),
		until(`!!document.querySelector('tr[data-credential="openai-main"]')`),
	)
	if html := get(b, chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, secret) {
		t.Error("the credential's raw value is on the page")
	}
	b.shot("credentials")
	b.noConsoleErrors()
}

func TestStudioSignInErrorsAndKey(t *testing.T) {
	t.Parallel()
	base, email, password := startServe(t)
	b := newBrowser(t, base)
	b.run(
		chromedp.Navigate(base+"/studio"),
		chromedp.WaitVisible(chromedp.CSS("#login-email")),
		chromedp.SendKeys(chromedp.CSS("#login-email"), email),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "not the password"),
		chromedp.Click(chromedp.CSS("#login-submit")),
		until(`document.querySelector('#signin-error').textContent !== ''`),
	)
	msg := b.text("#signin-error")
	if !strings.Contains(msg, "wrong email or password") {
		t.Errorf("sign-in error %q", msg)
	}
	b.shot("bad-password")

	// An unknown API key is refused; a real one (made through the API) signs in.
	b.run(
		chromedp.SendKeys(chromedp.CSS("#login-key"), "ap_not_a_real_key_at_all_0000000000000000"),
		chromedp.Click(chromedp.CSS("#key-submit")),
		until(`document.querySelector('#signin-error').textContent.includes('API key')`),
	)
	key := createKeyViaAPI(t, base, email, password)
	b.run(
		chromedp.SetValue(chromedp.CSS("#login-key"), key),
		chromedp.Click(chromedp.CSS("#key-submit")),
		chromedp.WaitVisible(chromedp.CSS("#new-agent")),
	)
	if who := b.text("#who"); !strings.Contains(who, key[:11]) || strings.Contains(who, key) {
		t.Errorf("header %q: want the key's prefix only", who)
	}
	b.shot("key-signin")

	// Schemas: edit the input schema on its own, check samples against the draft (the server
	// validates; a failing one is its 422 message), then save the draft as a version.
	b.createAgent("Typed", "simple", `{"model":"gpt-4o-mini"}`)
	b.run(
		chromedp.SetValue(chromedp.CSS("#input-schema"), `{"type":"object","properties":{"message":{"type":"string","minLength":3}},"required":["message"]}`),
		chromedp.SetValue(chromedp.CSS("#schema-sample"), `{"message":"hi"}`),
		chromedp.Click(chromedp.CSS("#schema-check")),
		until(`document.querySelector('#schema-result .error')?.textContent.includes('/message')`),
	)
	b.shot("schema-invalid")
	b.run(
		chromedp.SetValue(chromedp.CSS("#schema-sample"), `{"message":"hello there"}`),
		chromedp.Click(chromedp.CSS("#schema-check")),
		until(`document.querySelector('#schema-result .ok')?.textContent.startsWith('Valid')`),
		chromedp.Click(chromedp.CSS("#save-version")),
		until(`[...document.querySelectorAll('#h-versions ~ table tbody tr')].length === 2`),
		// Saving makes version 2; promoting it, after its diff with the active one, makes it active.
		until(`document.querySelector('#diff')?.textContent.includes('+   "input_schema"')`),
		chromedp.Click(chromedp.CSS("#promote-confirm")),
		until(`document.querySelector('tr[data-version="2"]')?.textContent.includes('active')`),
	)
	b.shot("schema-saved")
	agentID := js[string](b, `location.hash.split('/')[2]`)
	_, body := apiGet(t, base, "/api/v1/agents/"+agentID, http.Header{"X-API-Key": {key}})
	cfg, _ := body["data"].(map[string]any)["config"].(map[string]any)
	if _, ok := cfg["input_schema"]; !ok || body["data"].(map[string]any)["active_version"] != float64(2) {
		t.Errorf("after saving, the agent is %v", body["data"])
	}
}

// createKeyViaAPI logs in and creates an API key with every scope, returning the raw key.
func createKeyViaAPI(t *testing.T, base, email, password string) string {
	t.Helper()
	post := func(path, body string, h http.Header) map[string]any {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header = h
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode >= 300 {
			t.Fatalf("POST %s: %d %v %v", path, res.StatusCode, out, err)
		}
		return out["data"].(map[string]any)
	}
	tok := post("/api/v1/auth/login", fmt.Sprintf(`{"email":%q,"password":%q}`, email, password), http.Header{})["token"].(string)
	return post("/api/v1/api-keys", `{"name":"browser","scopes":["*"]}`,
		http.Header{"Authorization": {"Bearer " + tok}, "X-Workspace-ID": {cli.DefaultWorkspaceID}})["key"].(string)
}

func TestStudioPicksWorkspace(t *testing.T) {
	t.Parallel()
	base, st := startServeStore(t)
	research, err := st.WorkspaceCreate(context.Background(), &domain.Workspace{Name: "Research", Slug: "research"})
	if err != nil {
		t.Fatal(err)
	}
	addUser(t, st, "grace@example.com", "a long enough password", cli.DefaultWorkspaceID, research.ID)
	b := newBrowser(t, base)
	b.run(
		chromedp.Navigate(base+"/studio"),
		chromedp.WaitVisible(chromedp.CSS("#login-email")),
		chromedp.SendKeys(chromedp.CSS("#login-email"), "grace@example.com"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "a long enough password"),
		chromedp.Click(chromedp.CSS("#login-submit")),
		chromedp.WaitVisible(chromedp.CSS("#workspace")),
	)
	b.shot("pick")
	b.run(
		chromedp.SetValue(chromedp.CSS("#workspace"), research.ID),
		chromedp.Click(chromedp.CSS(`main button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#new-agent")),
	)
	if who := b.text("#who"); !strings.Contains(who, "Research") {
		t.Errorf("header %q does not name the chosen workspace", who)
	}
	b.createAgent("Researcher", "simple", `{"model":"gpt-4o-mini"}`)
	token := js[string](b, `JSON.parse(sessionStorage.getItem('agentplane.studio')).token`)
	for ws, want := range map[string]float64{research.ID: 1, cli.DefaultWorkspaceID: 0} {
		_, body := apiGet(t, base, "/api/v1/agents", http.Header{"Authorization": {"Bearer " + token}, "X-Workspace-ID": {ws}})
		if got := body["pagination"].(map[string]any)["total"]; got != want {
			t.Errorf("workspace %s holds %v agents, want %v", ws, got, want)
		}
	}
	// Signing out forgets the credential and shows the sign-in form.
	b.run(chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#login-email")))
	if left := js[bool](b, `sessionStorage.getItem('agentplane.studio') === null`); !left {
		t.Error("the credential is still in sessionStorage after signing out")
	}
	b.noConsoleErrors()
}

func TestStudioEmulator(t *testing.T) {
	t.Parallel()
	base := startEmulator(t)
	b := newBrowser(t, base)
	// No sign-in: Studio opens on the agents list.
	b.run(
		chromedp.Navigate(base+"/studio"),
		chromedp.WaitVisible(chromedp.CSS("#new-agent")),
	)
	if js[int](b, `document.querySelectorAll('#login-email').length`) != 0 {
		t.Error("the emulator's Studio asked to sign in")
	}
	b.run(until(`!!document.body.dataset.ready`))
	t.Logf("first page interactive %s ms after navigation", js[string](b, `document.body.dataset.ready`))
	b.shot("agents")

	// Keyboard: focus moves to the page on navigation; Tab goes through the search field and
	// button to "New agent", with a visible focus ring, and Enter opens it.
	b.run(chromedp.KeyEvent("\t"))
	if got := js[string](b, `document.activeElement.id`); got != "agent-search" {
		t.Errorf("first Tab focuses %q, want the search field", got)
	}
	b.run(chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"))
	if got := js[string](b, `document.activeElement.id + ' ' + getComputedStyle(document.activeElement).outlineStyle`); got != "new-agent solid" {
		t.Errorf("third Tab focuses %q, want the New agent link with a solid outline", got)
	}
	b.run(chromedp.KeyEvent("\r"), until(`document.querySelector('h1')?.textContent === 'New agent'`))

	b.createAgent("Echo", "simple", `{"model":"gpt-4o-mini"}`)
	// The draft runs through the playground endpoint, also recorded as source studio.
	b.run(chromedp.SetValue(chromedp.CSS("#run-version"), "draft"))
	b.runInPlayground(`{"message":"draft run"}`, "completed")
	b.shot("playground")
	_, body := apiGet(t, base, "/api/v1/executions?source=studio", nil)
	if list, _ := body["data"].([]any); len(list) != 1 || list[0].(map[string]any)["metadata"].(map[string]any)["source"] != "playground" {
		t.Errorf("studio executions: %v", body)
	}

	// A chat exchange with streamed reply.
	b.run(
		hash("#/chat"),
		chromedp.WaitVisible(chromedp.CSS("#chat-new")),
	)
	js[bool](b, `(() => { const s = document.querySelector('#chat-agent'); s.value = [...s.options].find(o => o.textContent === 'Echo').value; return true; })()`)
	b.run(
		chromedp.SendKeys(chromedp.CSS("#chat-title"), "First chat"),
		chromedp.Click(chromedp.CSS("#chat-new")),
		chromedp.WaitVisible(chromedp.CSS("#chat-input")),
		chromedp.SendKeys(chromedp.CSS("#chat-input"), "Hi there"),
		chromedp.Click(chromedp.CSS("#chat-send")),
		until(`(() => { const m = document.querySelectorAll('#chat-log .msg.assistant'); return m.length === 1 && m[0].textContent.length > 0 && !document.querySelector('#chat-send').disabled; })()`),
	)
	b.shot("chat")
	if with := b.text("#chat-with"); with != "With agent Echo" {
		t.Errorf("the session header says %q, want the agent's name", with)
	}
	reply := b.text("#chat-log .msg.assistant")
	// Reloading the session shows the same exchange from the API.
	b.run(
		chromedp.Reload(),
		until(`document.querySelectorAll('#chat-log .msg').length === 2`),
	)
	if stored := b.text("#chat-log .msg.assistant"); stored != reply {
		t.Errorf("stored reply %q, streamed %q", stored, reply)
	}

	// MCP tools: the seed's servers with their tools, and a refresh.
	b.run(hash("#/mcp-tools"), until(`document.querySelectorAll('main section.card').length > 0`))
	b.shot("mcp-tools")
	b.noConsoleErrors()
}

// TestStudioRegistersMCPServer: on `serve` with real tools, an MCP server (built with the
// SDK) is registered from the form, its tools are listed at once, and it is removed after a
// confirming second click; a server that does not answer stays registered with its error.
func TestStudioRegistersMCPServer(t *testing.T) {
	t.Parallel()
	base, st, _, _ := startServeKey(t, cli.ModelsReal)
	orders := mcptest.New(mcptest.StreamableHTTP)
	defer orders.Close()
	b := newBrowser(t, base)
	b.signIn(base, testEmail, testPassword)
	b.run(
		hash("#/mcp-tools"),
		chromedp.WaitVisible(chromedp.CSS("#mcp-name")),
	)
	if !js[bool](b, `document.querySelector('#mcp-command').closest('div').hidden`) {
		t.Errorf("the command field shows for an HTTP transport")
	}
	b.run(
		chromedp.SendKeys(chromedp.CSS("#mcp-name"), "Orders"),
		chromedp.SendKeys(chromedp.CSS("#mcp-url"), orders.Endpoint),
		chromedp.Click(chromedp.CSS("#mcp-create")),
		until(`document.querySelectorAll('section[data-mcp="Orders"] li').length > 0`),
	)
	tools := b.text(`section[data-mcp="Orders"] ul`)
	for _, name := range []string{"lookup_order", "chart"} {
		if !strings.Contains(tools, name) {
			t.Errorf("tools listed %q, want %s", tools, name)
		}
	}
	b.shot("mcp-registered")

	// A server that is not there: registered, with the refresh's error on its card.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	b.run(
		chromedp.SendKeys(chromedp.CSS("#mcp-name"), "Gone"),
		chromedp.SendKeys(chromedp.CSS("#mcp-url"), dead.URL+"/mcp"),
		chromedp.Click(chromedp.CSS("#mcp-create")),
		until(`!!document.querySelector('section[data-mcp="Gone"] p.error')`),
	)
	if msg := b.text("#status"); !strings.Contains(msg, "listing its tools failed") {
		t.Errorf("toast %q", msg)
	}

	// Remove asks for a second click.
	b.run(
		chromedp.Click(chromedp.CSS(`section[data-mcp="Orders"] button.danger`)),
		until(`document.querySelector('section[data-mcp="Orders"] button.danger').textContent.startsWith('Confirm')`),
		chromedp.Click(chromedp.CSS(`section[data-mcp="Orders"] button.danger`)),
		until(`!document.querySelector('section[data-mcp="Orders"]')`),
	)
	if list, _, err := st.MCPToolList(context.Background(), cli.DefaultWorkspaceID, domain.MCPToolFilter{}, domain.Page{Page: 1, Limit: 10}); err != nil || len(list) != 1 || list[0].Name != "Gone" {
		t.Errorf("servers left: %v %v", list, err)
	}
	b.noConsoleErrors()
}

// lookupList returns the list at a path of nested objects.
func lookupList(m map[string]any, path ...string) ([]any, bool) {
	var cur any = m
	for _, k := range path {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = o[k]
	}
	l, ok := cur.([]any)
	return l, ok
}

// TestStudioManyExecutions: with more executions than the API counts, the list is paginated
// by the server (one page of rows in the page, the total from the API, "more than" past the
// API's count cap) and the next page is fetched on demand, past the pages a capped total
// counts too.
// The time to the first rows is logged, not asserted (timings belong in benchmarks).
func TestStudioManyExecutions(t *testing.T) {
	t.Parallel()
	base, st := startServeStore(t)
	email, password := "ada@example.com", "correct horse battery"
	addUser(t, st, email, password, cli.DefaultWorkspaceID)
	ctx := context.Background()
	a, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: cli.DefaultWorkspaceID, Name: "Bulk", Type: "simple", Status: "active"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	// Two pages past the count cap show the same as 10,000 runs did: one server page of many,
	// a total past the cap, a second page, and a page after the last the capped total counts
	// (page TotalCap/25+2 needs more than TotalCap+25 runs); stored in one transaction, they
	// take seconds instead of minutes under the race detector.
	const n = domain.TotalCap + 50
	seeded := time.Now()
	err = st.InTx(ctx, func(tx *store.Store) error {
		for i := range n {
			x := &domain.Execution{WorkspaceID: cli.DefaultWorkspaceID, AgentID: a.ID, Source: "api", Status: domain.StatusCompleted,
				Input: domain.JSONObject{"i": i}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
			if err := tx.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: cli.DefaultWorkspaceID, Name: "Bulk"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d executions stored in %v", n, time.Since(seeded))
	b := newBrowser(t, base)
	b.signIn(base, email, password)
	start := time.Now()
	b.run(hash("#/executions"), until(`document.querySelectorAll('tbody tr').length > 0`))
	t.Logf("first page of %d executions shown in %v", n, time.Since(start))
	rows := js[int](b, `document.querySelectorAll('tbody tr').length`)
	if rows == 0 || rows > 100 {
		t.Errorf("%d rows in the page; want one server page", rows)
	}
	// The runs are past the API's count cap: the pager says the total is a lower bound.
	if pages, want := b.text(`[aria-label="Pages"] span`), fmt.Sprintf("more than %d in all", domain.TotalCap); !strings.Contains(pages, want) {
		t.Errorf("pager says %q, want %q", pages, want)
	}
	first := b.text("tbody tr a")
	b.run(
		chromedp.Click(chromedp.CSS(`[aria-label="Pages"] button:last-child`)),
		until(`!!document.querySelector('[aria-label="Pages"] span')?.textContent.startsWith('Page 2 ')`),
	)
	if b.text("tbody tr a") == first {
		t.Error("page 2 shows the same first row as page 1")
	}
	// The last page that a capped total counts (25 rows a page) still leads on: Next follows
	// next_cursor, not total_pages.
	last := domain.TotalCap/25 + 1
	b.run(
		hash(fmt.Sprintf("#/executions?page=%d", last)),
		until(fmt.Sprintf(`!!document.querySelector('[aria-label="Pages"] span')?.textContent.startsWith('Page %d ')`, last)),
		chromedp.Click(chromedp.CSS(`[aria-label="Pages"] button:last-child`)),
		until(fmt.Sprintf(`!!document.querySelector('[aria-label="Pages"] span')?.textContent.startsWith('Page %d ')`, last+1)),
	)
	b.shot("many-executions")
	b.noConsoleErrors()
}
