package sdks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const npmHint = "install Node.js 18 or later and run `npm ci --ignore-scripts --prefix sdks/typescript` (.ci/run does)"

// buildTypeScript compiles the SDK with the pinned tsc in strict mode (into dist/).
func buildTypeScript(t *testing.T) string {
	t.Helper()
	node := tool(t, "node", npmHint)
	tsc := filepath.Join("typescript", "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		missing(t, "tsc is not installed: "+npmHint)
	}
	run(t, "typescript", nil, node, filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json")
	return node
}

// TestTypeScriptSDK compiles the SDK, then runs sdks/typescript/test with node's test runner
// against one emulator, loads the compiled bundle in headless Chromium, and runs the suite
// against serve (SQLite, simulated models): the three side by side, as they share nothing
// but the compiled SDK and mostly wait on node, Chromium and the servers.
func TestTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node := buildTypeScript(t)
	emu := startEmulator(t)
	t.Run("Emulator", func(t *testing.T) {
		t.Parallel()
		t.Log(run(t, "typescript", emu.env(), node, "--test", "--test-reporter=spec", "test/sdk.test.mjs"))
	})
	t.Run("Browser", func(t *testing.T) {
		t.Parallel()
		browserCheck(t, emu)
	})
	t.Run("Serve", func(t *testing.T) {
		t.Parallel()
		t.Log(run(t, "typescript", startServe(t).env(), node, "--test", "--test-reporter=spec", "test/sdk.test.mjs"))
	})
}

// browserPage loads the ESM bundle in a page, lists the seeded agents, runs one and streams
// its execution, then writes what it got into #result.
const browserPage = `<!doctype html><meta charset="utf-8"><title>sdk</title><pre id="result"></pre>
<script type="module">
import { Agentplane, NotFoundError } from "/dist/index.js";
const out = document.getElementById("result");
try {
  const client = new Agentplane({ baseURL: new URLSearchParams(location.search).get("api"), apiKey: "ap_browser" });
  const agents = await client.agents.list({ type: "simple" }).toArray();
  const run = await client.agents.execute(agents[0].id, { input: { question: "hello from a browser" } });
  const events = await client.executions.stream(run.id).toArray();
  let notFound = false;
  try { await client.agents.retrieve("nope"); } catch (e) { notFound = e instanceof NotFoundError; }
  out.textContent = JSON.stringify({ agents: agents.length, status: run.status, last: events.at(-1).event, notFound });
} catch (e) {
  out.textContent = "error: " + e;
}
out.id = "done";
</script>`

// browserCheck serves dist/ and the page from one origin, the API from another (CORS), and
// reads the page's result in headless Chromium.
func browserCheck(t *testing.T, emu emulator) {
	exe := "/usr/bin/chromium"
	if p := os.Getenv("AGENTPLANE_CHROMIUM"); p != "" {
		exe = p
	}
	if _, err := os.Stat(exe); err != nil {
		if os.Getenv("AGENTPLANE_REQUIRE_BROWSER") == "1" {
			t.Fatalf("AGENTPLANE_REQUIRE_BROWSER=1 but %s is missing: apt-get install -y chromium", exe)
		}
		t.Skipf("browser check skipped: %s not found (apt-get install -y chromium, or set AGENTPLANE_CHROMIUM)", exe)
	}
	mux := http.NewServeMux()
	mux.Handle("/dist/", http.StripPrefix("/dist/", http.FileServer(http.Dir(filepath.Join("typescript", "dist")))))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(browserPage))
	})
	site := httptest.NewServer(mux)
	defer site.Close()

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(t.TempDir()))
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL+"/?api="+emu.URL), chromedp.WaitReady(chromedp.CSS("#done"))); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	result, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#done")))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	want := `"status":"completed","last":"done","notFound":true}`
	if !strings.Contains(result, want) || strings.Contains(result, `"agents":0`) {
		t.Fatalf("the bundle in Chromium answered %s, want …%s", result, want)
	}
}
