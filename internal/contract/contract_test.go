package contract

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/api"
	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// publicURL is the --public-url of the server flavour; the emulator flavour's servers entry
// comes from the request instead, so both ways of filling it are linted.
const publicURL = "https://agentplane.test"

const installHint = "install the contract tools with `npm ci --ignore-scripts --prefix internal/contract` and `go mod download` (.ci/run does both)"

// flavours are the two published documents.
var flavours = []struct {
	name     string
	emulator bool
}{{"server", false}, {"emulator", true}}

// servedDocument serves the API (server or emulator flavour) on a loopback test server and
// writes the document GET /openapi.json answers to a temporary file.
func servedDocument(t *testing.T, emulator bool) string {
	t.Helper()
	st := storetest.Memory(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := runtime.New(runtime.Config{Store: runtime.SQLStore{Store: st}, Router: runtime.SimulatedRouter{Model: simulated.New()}, Logger: log})
	box := secretbox.NewRandom()
	var ds datasource.Executor = seed.NewSample(st)
	if !emulator {
		ds = datasource.NewLive(datasource.LiveConfig{Store: st, Secrets: box})
	}
	t.Cleanup(func() { ds.Close() })
	cfg := api.Config{Store: st, Logger: log, Secrets: box, Engine: eng, Emulator: emulator, WorkspaceID: "contract", DataSources: ds}
	if !emulator {
		cfg.PublicURL = publicURL
	}
	srv, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.CloseStreams()
		ts.Close()
	})
	resp, err := http.Get(ts.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %v", resp.StatusCode, err)
	}
	// In a directory named after the flavour: the linters name the file of each finding.
	dir := filepath.Join(t.TempDir(), "server")
	if emulator {
		dir = filepath.Join(filepath.Dir(dir), "emulator")
	}
	path := filepath.Join(dir, "openapi.json")
	if err := errors.Join(os.Mkdir(dir, 0o755), os.WriteFile(path, doc, 0o644)); err != nil {
		t.Fatal(err)
	}
	return path
}

// servedDocuments returns the paths of both flavours' documents (servedDocument).
func servedDocuments(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, f := range flavours {
		paths = append(paths, servedDocument(t, f.emulator))
	}
	return paths
}

// npmTool returns the path of an npm-installed binary, skipping the test when it is missing.
func npmTool(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		missingTool(t, name+" is not installed: "+installHint)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missingTool(t, "node is not on PATH: install Node.js 20 or later, then "+installHint)
	}
	return path
}

// missingTool skips the test, or fails it where the tools must be there (CI).
func missingTool(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("AGENTPLANE_REQUIRE_CONTRACT_TOOLS") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// run runs a command in dir with the tools' network features turned off, and returns its
// combined output. Its 10 minutes leave room for a cold build cache on 2 busy cores: building
// oapi-codegen for `go tool` took 111 s in CI and over 3 minutes on a loaded machine.
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestLintRedocly lints both documents with Redocly's recommended rules (redocly.yaml): any
// error fails, warnings are logged. One run lints both (each run pays Node's start and the
// rules' set-up again); its output names each finding's file, server/ or emulator/.
func TestLintRedocly(t *testing.T) {
	t.Parallel()
	redocly := npmTool(t, "redocly")
	args := append([]string{"lint", "--config", "redocly.yaml", "--format", "stylish"}, servedDocuments(t)...)
	out, err := run(t, ".", nil, redocly, args...)
	if err != nil {
		t.Fatalf("redocly lint found errors (%v):\n%s", err, out)
	}
	t.Logf("redocly lint:\n%s", out)
}

// TestLintSpectral lints both documents with Spectral's OpenAPI ruleset (.spectral.yaml): any
// error fails, warnings are logged. One run lints both, as TestLintRedocly.
func TestLintSpectral(t *testing.T) {
	t.Parallel()
	spectral := npmTool(t, "spectral")
	args := append([]string{"lint", "--ruleset", ".spectral.yaml", "--fail-severity", "error", "--format", "text"}, servedDocuments(t)...)
	out, err := run(t, ".", nil, spectral, args...)
	if err != nil {
		t.Fatalf("spectral lint found errors (%v):\n%s", err, out)
	}
	t.Logf("spectral lint:\n%s", out)
}

// TestGoClientBuilds generates a Go client from each document with oapi-codegen (the go.mod
// tool), one package per flavour in one module of their own, and builds them offline, from the
// module cache. One build of both packages: two builds at once would each compile the same
// dependencies (the standard library too, when the build cache is cold, as in CI).
func TestGoClientBuilds(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, ".", offlineGo(), "go", "tool", "oapi-codegen", "-version"); err != nil {
		missingTool(t, "oapi-codegen cannot run ("+strings.TrimSpace(out)+"): "+installHint)
	}
	cfg, err := filepath.Abs(filepath.Join("testdata", "oapi-codegen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	writeClientModule(t, root, mod)
	for _, f := range flavours {
		doc := servedDocument(t, f.emulator)
		pkg := filepath.Join(mod, f.name)
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		// Run from this module so `go tool` finds the pinned oapi-codegen; write into the
		// client's module.
		out, err := run(t, ".", offlineGo(), "go", "tool", "oapi-codegen", "-config", cfg, "-o", filepath.Join(pkg, "client.gen.go"), doc)
		if err != nil {
			t.Fatalf("oapi-codegen failed on the %s document (%v):\n%s", f.name, err, out)
		}
	}
	// The compiler's errors name the package, so the flavour: ./server or ./emulator.
	// -trimpath keeps the module's temporary directory out of the build cache's keys: a
	// client generated the same as in an earlier run is not compiled again (over a minute of
	// CPU for the server's 128,000 lines under load); any change to it is.
	if out, err := run(t, mod, offlineGo(), "go", "build", "-trimpath", "./..."); err != nil {
		t.Fatalf("a client oapi-codegen generated does not build (%v):\n%s", err, out)
	}
}

// offlineGo is the environment of the go commands the tests run: no downloads, no workspace,
// go.mod never rewritten.
func offlineGo() []string {
	return []string{"GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly"}
}

// writeClientModule makes dir a module requiring exactly what this module requires (so the
// generated client's imports, the oapi-codegen runtime among them, resolve from the cache).
func writeClientModule(t *testing.T, root, dir string) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(gomod), "\n") {
		switch {
		case strings.HasPrefix(line, "module "):
			line = "module example.test/apclient"
		case strings.HasPrefix(line, "tool "), strings.HasPrefix(line, "ignore "):
			continue
		}
		b.WriteString(line + "\n")
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.WriteFile(filepath.Join(dir, "go.mod"), []byte(b.String()), 0o644),
		os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)); err != nil {
		t.Fatal(err)
	}
}

// TestTypeScriptClientCompiles generates types from each document with openapi-typescript
// and type-checks testdata/client.ts, which calls the API through openapi-fetch, against each
// (one tsc run for both).
func TestTypeScriptClientCompiles(t *testing.T) {
	t.Parallel()
	gen := npmTool(t, "openapi-typescript")
	tsc := npmTool(t, "tsc")
	modules, err := filepath.Abs("node_modules")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "client.ts"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for _, f := range flavours {
		doc := servedDocument(t, f.emulator)
		sub := filepath.Join(dir, f.name)
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := run(t, dir, nil, gen, doc, "--output", filepath.Join(sub, "schema.d.ts")); err != nil {
			t.Fatalf("openapi-typescript failed on the %s document (%v):\n%s", f.name, err, out)
		}
		if err := os.WriteFile(filepath.Join(sub, "client.ts"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, `"`+f.name+`/client.ts"`)
	}
	tsconfig := `{"compilerOptions": {"strict": true, "noEmit": true, "noUnusedLocals": true, "target": "ES2022",
  "module": "ESNext", "moduleResolution": "Bundler", "lib": ["ES2022", "DOM"]}, "files": [` + strings.Join(files, ", ") + `]}`
	if err := errors.Join(os.Symlink(modules, filepath.Join(dir, "node_modules")),
		os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(tsconfig), 0o644)); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, dir, nil, tsc, "-p", "tsconfig.json"); err != nil {
		t.Fatalf("testdata/client.ts does not type-check against the generated types (%v):\n%s", err, out)
	}
}
