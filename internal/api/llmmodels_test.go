package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

func TestLLMModelRoutes(t *testing.T) {
	e := newTestEnv(t)
	const base = "/api/v1/llm-models"
	create := `{"id":"llama3.1:8b","provider":"ollama","context_window":131072,"max_output_tokens":4096,
		"input_price_per_million":0.1,"output_price_per_million":0.2,"capabilities":["chat","tools"]}`
	e.run([]scenario{
		{name: "create", method: "POST", path: base, body: create, status: 201, fields: map[string]any{
			"data.id": "llama3.1:8b", "data.source": "workspace", "data.name": "llama3.1:8b", "data.provider": "ollama",
			"data.context_window": 131072, "data.capabilities": []any{"chat", "tools"}}},
		{name: "create again", method: "POST", path: base, body: create, status: 409, code: "conflict", message: "already exists"},
		{name: "create catalog id", method: "POST", path: base, body: `{"id":"gpt-4o-mini","provider":"openai","context_window":1000}`,
			status: 409, code: "conflict", message: "built-in"},
		{name: "create no id", method: "POST", path: base, body: `{"provider":"ollama","context_window":1000}`, status: 422, message: "id"},
		{name: "create no provider", method: "POST", path: base, body: `{"id":"m","context_window":1000}`, status: 422, message: "provider"},
		{name: "create no window", method: "POST", path: base, body: `{"id":"m","provider":"ollama"}`, status: 422, message: "context_window"},
		{name: "create negative price", method: "POST", path: base, body: `{"id":"m","provider":"ollama","context_window":10,"input_price_per_million":-1}`,
			status: 422, message: "input_price_per_million"},
		{name: "create wrong type", method: "POST", path: base, body: `{"id":"m","provider":"ollama","context_window":"big"}`, status: 400, message: "context_window"},
		{name: "get", method: "GET", path: base + "/llama3.1:8b", status: 200, fields: map[string]any{"data.source": "workspace"}},
		{name: "get catalog", method: "GET", path: base + "/gpt-4o-mini", status: 200, fields: map[string]any{"data.source": "catalog"}},
		{name: "list workspace", method: "GET", path: base + "?source=workspace", status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.id": "llama3.1:8b"}},
		{name: "list provider", method: "GET", path: base + "?provider=ollama", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list catalog", method: "GET", path: base + "?source=catalog&provider=openai&limit=1", status: 200, fields: map[string]any{"data.0.source": "catalog"}},
		{name: "list bad source", method: "GET", path: base + "?source=mine", status: 400, message: "source"},
		{name: "patch", method: "PATCH", path: base + "/llama3.1:8b", body: `{"name":"Llama 3.1 8B","output_price_per_million":0.3,"capabilities":["chat"]}`,
			status: 200, fields: map[string]any{"data.name": "Llama 3.1 8B", "data.output_price_per_million": 0.3, "data.capabilities": []any{"chat"}, "data.input_price_per_million": 0.1}},
		{name: "patch bad window", method: "PATCH", path: base + "/llama3.1:8b", body: `{"context_window":0}`, status: 422, message: "context_window"},
		{name: "patch catalog", method: "PATCH", path: base + "/gpt-4o-mini", body: `{"name":"mine"}`, status: 403, code: "forbidden", message: "read-only"},
		{name: "patch missing", method: "PATCH", path: base + "/nope", body: `{"name":"x"}`, status: 404},
		{name: "delete catalog", method: "DELETE", path: base + "/gpt-4o-mini", status: 403, code: "forbidden"},
		{name: "agent on it", method: "POST", path: "/api/v1/agents", body: `{"name":"Local","type":"simple","config":{"model":"llama3.1:8b"}}`, status: 201},
		{name: "agent on an unknown model", method: "POST", path: "/api/v1/agents", body: `{"name":"X","type":"simple","config":{"model":"llama9"}}`,
			status: 422, message: "config.model"},
		{name: "delete", method: "DELETE", path: base + "/llama3.1:8b", status: 200, fields: map[string]any{"data.id": "llama3.1:8b"}},
		{name: "gone", method: "GET", path: base + "/llama3.1:8b", status: 404},
	})
}

// credentialRouterEnv is a server whose runs go to the workspaces' provider credentials.
func credentialRouterEnv(t *testing.T) *testEnv {
	t.Helper()
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newTestEnv(t, onStore(st), asServer(), withRouter(func(st *store.Store, box *secretbox.Box) runtime.ModelRouter {
		return &runtime.CredentialRouter{Store: st, Secrets: box, Simulated: simulated.New()}
	}))
}

func TestExecuteNeedsACredential(t *testing.T) {
	e := credentialRouterEnv(t)
	var agent, simAgent, metaAgent, localAgent, credID string
	e.run([]scenario{
		{name: "agent", method: "POST", path: "/api/v1/agents", body: `{"name":"A","type":"simple","config":{"model":"command-r-plus-08-2024"}}`, status: 201,
			check: func(t *testing.T, b map[string]any) { agent = lookup(b, "data.id").(string) }},
		{name: "meta agent", method: "POST", path: "/api/v1/agents", body: `{"name":"M","type":"simple","config":{"model":"llama-3.3-70b-versatile"}}`, status: 201,
			check: func(t *testing.T, b map[string]any) { metaAgent = lookup(b, "data.id").(string) }},
		{name: "simulated agent", method: "POST", path: "/api/v1/agents", body: `{"name":"S","type":"simple","config":{"model":"command-r-plus-08-2024","simulation":{}}}`, status: 201,
			check: func(t *testing.T, b map[string]any) { simAgent = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "no credential", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 422, code: "validation_error",
			message: "no credential for provider cohere in this workspace: add one in Studio (the Credentials page, /studio#/credentials), with the CLI (agentplane credentials add --provider cohere --value …) or with POST /api/v1/credentials"},
		{name: "async too", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{"message":"hi"},"async":true}`, status: 422, message: "cohere"},
		{name: "playground too", method: "POST", path: "/api/v1/agents/" + agent + "/playground", body: `{"config":{"model":"gpt-4o"},"input":{"message":"hi"}}`,
			status: 422, message: "no credential for provider openai"},
		{name: "meta has no API", method: "POST", path: "/api/v1/agents/" + metaAgent + "/execute", body: `{"input":{"message":"hi"}}`, status: 422,
			message: "config.credential_id"},
		{name: "nothing recorded", method: "GET", path: "/api/v1/executions?agent_id=" + agent, status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "simulation still simulates", method: "POST", path: "/api/v1/agents/" + simAgent + "/execute", body: `{"input":{"message":"hi"}}`, status: 200,
			fields: map[string]any{"data.status": "completed"}},
		{name: "ollama needs a base url", method: "POST", path: "/api/v1/credentials", body: `{"name":"local","type":"api_key","provider":"ollama","value":"ollama"}`,
			status: 422, message: "metadata.base_url"},
		{name: "base url must be http", method: "POST", path: "/api/v1/credentials",
			body: `{"name":"local","type":"api_key","provider":"openai","value":"sk-x","metadata":{"base_url":"ftp://x"}}`, status: 422, message: "http"},
		{name: "default must be a boolean", method: "POST", path: "/api/v1/credentials",
			body: `{"name":"o","type":"api_key","provider":"openai","value":"sk-x","metadata":{"default":"yes"}}`, status: 422, message: "metadata.default"},
		{name: "ollama credential", method: "POST", path: "/api/v1/credentials",
			body: `{"name":"local","type":"api_key","provider":"ollama","value":"ollama","metadata":{"base_url":"http://127.0.0.1:1/v1"}}`, status: 201,
			check: func(t *testing.T, b map[string]any) { credID = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "patch drops the base url", method: "PATCH", path: "/api/v1/credentials/" + credID, body: `{"metadata":{}}`, status: 422, message: "metadata.base_url"},
		{name: "unknown model with a credential", method: "POST", path: "/api/v1/agents",
			body: `{"name":"L","type":"simple","config":{"model":"llama3.1:8b","credential_id":"` + credID + `"}}`, status: 201,
			check: func(t *testing.T, b map[string]any) { localAgent = lookup(b, "data.id").(string) }},
		{name: "credential must exist", method: "POST", path: "/api/v1/agents",
			body: `{"name":"L","type":"simple","config":{"model":"llama3.1:8b","credential_id":"nope"}}`, status: 422, message: "config.credential_id"},
		{name: "bad retries", method: "POST", path: "/api/v1/agents",
			body: `{"name":"L","type":"simple","config":{"model":"gpt-4o","max_retries":11}}`, status: 422, message: "config.max_retries"},
		{name: "bad timeout", method: "POST", path: "/api/v1/agents",
			body: `{"name":"L","type":"simple","config":{"model":"gpt-4o","request_timeout_ms":-1}}`, status: 422, message: "config.request_timeout_ms"},
	})
	// The credential's server is down: the run is recorded and fails naming the provider.
	e.run([]scenario{
		{name: "unreachable provider", method: "POST", path: "/api/v1/agents/" + localAgent + "/execute",
			body: `{"input":{"message":"hi"}}`, status: 200, fields: map[string]any{"data.status": "failed"},
			check: func(t *testing.T, b map[string]any) {
				if msg, _ := lookup(b, "data.error").(string); !strings.Contains(msg, "ollama") || !strings.Contains(msg, "refused") {
					t.Fatalf("error %q", msg)
				}
			}},
		{name: "validate unreachable", method: "POST", path: "/api/v1/credentials/" + credID + "/validate", status: 200,
			fields: map[string]any{"data.valid": false, "data.status": 0}},
		{name: "stored", method: "GET", path: "/api/v1/credentials/" + credID, status: 200, fields: map[string]any{"data.valid": false},
			check: func(t *testing.T, b map[string]any) {
				if lookup(b, "data.last_validated_at") == nil || !strings.Contains(lookup(b, "data.validation_message").(string), "could not reach") {
					t.Fatalf("validation not stored: %v", b)
				}
			}},
	})
	// A credential deleted while a run waits in the queue fails that run the same way.
	if _, err := e.store.CredentialDelete(context.Background(), e.ws, credID); err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "credential gone", method: "POST", path: "/api/v1/agents/" + localAgent + "/execute", body: `{"input":{"message":"hi"}}`, status: 422,
			message: "config.credential_id"},
	})
}

func TestValidateCredential(t *testing.T) {
	e := newTestEnv(t) // the emulator: every model is simulated
	var openai, github string
	e.run([]scenario{
		{name: "openai", method: "POST", path: "/api/v1/credentials", body: `{"name":"o","type":"api_key","provider":"openai","value":"sk-abc"}`, status: 201,
			check: func(t *testing.T, b map[string]any) { openai = lookup(b, "data.id").(string) }},
		{name: "github", method: "POST", path: "/api/v1/credentials", body: `{"name":"g","type":"bearer_token","provider":"github","value":"ghp_abc"}`, status: 201,
			check: func(t *testing.T, b map[string]any) { github = lookup(b, "data.id").(string) }},
		{name: "never validated", method: "GET", path: "/api/v1/credentials?provider=openai", status: 200,
			fields: map[string]any{"data.0.valid": nil, "data.0.last_validated_at": nil}},
	})
	e.run([]scenario{
		{name: "simulated", method: "POST", path: "/api/v1/credentials/" + openai + "/validate", status: 200,
			fields: map[string]any{"data.valid": true, "data.status": http.StatusOK}, check: func(t *testing.T, b map[string]any) {
				if !strings.Contains(lookup(b, "data.message").(string), "simulated") {
					t.Fatalf("message %v", b)
				}
			}},
		{name: "not a model provider", method: "POST", path: "/api/v1/credentials/" + github + "/validate", status: 422, message: "github"},
		{name: "missing", method: "POST", path: "/api/v1/credentials/nope/validate", status: 404},
		{name: "stored", method: "GET", path: "/api/v1/credentials/" + openai, status: 200, fields: map[string]any{"data.valid": true}},
	})
}
