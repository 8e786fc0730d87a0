package contract

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/api"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// servedAgents serves the API (server or emulator flavour) with an agent "Helper" and
// returns its base URL and an API key. The server's agent calls a fake OpenAI provider
// speaking the real wire format; the emulator's answers from the simulated model.
func servedAgents(t *testing.T, emulator bool) (string, string) {
	t.Helper()
	ctx := context.Background()
	st := storetest.Memory(t)
	const ws = "2o0yqLDGdJdFRBTuhdfPNEZdAvX"
	storetest.Workspace(t, st, &domain.Workspace{ID: ws, Name: "Clients", Slug: "clients"})
	if err := seed.LoadCatalog(ctx, st); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	box := secretbox.NewRandom()
	var router runtime.ModelRouter = runtime.SimulatedRouter{Model: simulated.New()}
	if !emulator {
		router = &runtime.CredentialRouter{Store: st, Secrets: box, Simulated: simulated.New()}
	}
	eng := runtime.New(runtime.Config{Store: runtime.SQLStore{Store: st}, Router: router, Logger: log})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ds := seed.NewSample(st)
	srv, err := api.New(api.Config{Store: st, Logger: log, Secrets: box, Engine: eng, Emulator: emulator, WorkspaceID: ws, DataSources: ds})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.CloseStreams()
		ts.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng.Stop(sctx)
		ds.Close()
	})
	key := "ap_emulator_accepts_any_key"
	c := client.New(ts.URL)
	if !emulator {
		if key, err = auth.NewKey(); err != nil {
			t.Fatal(err)
		}
		if _, err := st.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: ws, Name: "clients", KeyPrefix: auth.KeyPrefix(key), Scopes: domain.Strings{"*"}}, auth.HashKey(key)); err != nil {
			t.Fatal(err)
		}
		c = client.New(ts.URL, client.WithAPIKey(key))
		fake := llmtest.NewOpenAI()
		t.Cleanup(fake.Close)
		fake.Discard = true
		fake.Fallback = func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Text: []string{"Hi ", "from ", "the fake."}, Usage: &llmtest.Usage{Prompt: 20, Completion: 4}}
		}
		if _, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
			Value: "sk-test000000000000000000000000000000wxyz", Metadata: map[string]any{"base_url": fake.URL}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Helper", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You are Helper."}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PromptCreate(ctx, client.PromptCreateRequest{Name: "greet", Template: "Say hello to {{name}}."}); err != nil {
		t.Fatal(err)
	}
	return ts.URL, key
}

// requireNodePackages skips the test (fails it in CI) when an npm package is not installed.
func requireNodePackages(t *testing.T, pkgs ...string) {
	t.Helper()
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join("node_modules", pkg, "package.json")); err != nil {
			missingTool(t, "npm package "+pkg+" is not installed: "+installHint)
		}
	}
	npmTool(t, "tsc") // and node must be on PATH
}

// runNodeScript runs testdata/script against both flavours, with env made from each one's
// base URL and key; the script prints "ok" when its checks passed.
func runNodeScript(t *testing.T, script string, env func(url, key string) []string) {
	for _, fl := range flavours {
		t.Run(fl.name, func(t *testing.T) {
			t.Parallel()
			url, key := servedAgents(t, fl.emulator)
			out, err := run(t, ".", env(url, key), "node", filepath.Join("testdata", script))
			if err != nil || !strings.HasSuffix(strings.TrimSpace(out), "ok") {
				t.Fatalf("node testdata/%s: %v\n%s", script, err, out)
			}
		})
	}
}

// TestMCPClient runs the MCP TypeScript SDK's client against both flavours' MCP server:
// listing and calling agent tools (with progress), a failing call, prompts
// (testdata/mcp_client.mjs).
func TestMCPClient(t *testing.T) {
	t.Parallel()
	requireNodePackages(t, "@modelcontextprotocol/sdk")
	runNodeScript(t, "mcp_client.mjs", func(url, key string) []string {
		return []string{"AP_MCP=" + url + "/api/v1/mcp", "AP_KEY=" + key}
	})
}

// TestOpenAIClients runs the official openai npm SDK (chat completions, streaming with usage,
// responses with previous_response_id, typed errors) and the Vercel AI SDK (generateText,
// streamText with @ai-sdk/openai-compatible) against both flavours (testdata/openai_clients.mjs).
func TestOpenAIClients(t *testing.T) {
	t.Parallel()
	requireNodePackages(t, "openai", "ai", "@ai-sdk/openai-compatible")
	runNodeScript(t, "openai_clients.mjs", func(url, key string) []string {
		return []string{"AP_BASE=" + url + "/api/v1/openai", "AP_KEY=" + key, "AP_MODEL=Helper"}
	})
}
