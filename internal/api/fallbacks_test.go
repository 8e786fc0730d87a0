package api

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// fallbackEnv is a server whose runs go to two fake providers: OpenAI (gpt-4o-mini) and
// Anthropic (claude-3-5-haiku), each with a credential pointing at it.
func fallbackEnv(t *testing.T) (e *testEnv, oa, an *llmtest.Server) {
	t.Helper()
	e = credentialRouterEnv(t)
	oa, an = llmtest.NewOpenAI(), llmtest.NewAnthropic()
	t.Cleanup(oa.Close)
	t.Cleanup(an.Close)
	e.run([]scenario{
		{name: "openai credential", method: "POST", path: "/api/v1/credentials", status: 201,
			body: `{"name":"oa","type":"api_key","provider":"openai","value":"sk-fallback-openai-0000","metadata":{"base_url":"` + oa.URL + `/v1"}}`},
		{name: "anthropic credential", method: "POST", path: "/api/v1/credentials", status: 201,
			body: `{"name":"an","type":"api_key","provider":"anthropic","value":"sk-ant-fallback-0000","metadata":{"base_url":"` + an.URL + `"}}`},
	})
	return e, oa, an
}

// TestFallbackModels: the primary answering 503 through its retries hands the call to the
// fallback, which answers; the execution and its done frame name the fallback, its cost is
// at the fallback's prices, and each model tried is a span. A call that already streamed is
// never handed on.
func TestFallbackModels(t *testing.T) {
	e, oa, an := fallbackEnv(t)
	ctx := context.Background()
	down := llmtest.Reply{Status: 503, ErrorMessage: "overloaded", Header: http.Header{"Retry-After-Ms": {"1"}}}
	oa.Push(down, down)
	an.Push(llmtest.Reply{Text: []string{"Hello ", "from the fallback."}, Usage: &llmtest.Usage{Prompt: 1000, Completion: 500}})
	var agent, xid, trace string
	e.run([]scenario{
		{name: "agent", method: "POST", path: "/api/v1/agents", status: 201,
			body:   `{"name":"F","type":"simple","config":{"model":"gpt-4o-mini","max_retries":1,"fallback_models":["claude-3-5-haiku-20241022"]}}`,
			fields: map[string]any{"data.config.fallback_models": []any{"claude-3-5-haiku-20241022"}},
			check:  func(t *testing.T, b map[string]any) { agent = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "execute", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 200,
			fields: map[string]any{"data.status": "completed", "data.model": "claude-3-5-haiku-20241022", "data.output.content": "Hello from the fallback."},
			check: func(t *testing.T, b map[string]any) {
				xid, trace = lookup(b, "data.id").(string), lookup(b, "data.trace_id").(string)
				m, err := e.store.LLMModelGet(ctx, e.ws, "claude-3-5-haiku-20241022")
				if err != nil {
					t.Fatal(err)
				}
				want := (1000*m.InputPricePerMillion + 500*m.OutputPricePerMillion) / 1e6
				if got := lookup(b, "data.cost").(float64); math.Abs(got-want) > 1e-12 {
					t.Errorf("cost %v, want %v (the fallback's prices)", got, want)
				}
			}},
	})
	if n := len(oa.Requests()); n != 2 {
		t.Errorf("the primary got %d requests, want 2 (one retry)", n)
	}
	x, err := e.store.ExecutionGet(ctx, e.ws, xid)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := e.store.TraceGet(ctx, e.ws, trace)
	if err != nil {
		t.Fatal(err)
	}
	var tried []string
	for _, sp := range tr.Spans {
		if sp.Kind == "llm" {
			tried = append(tried, sp.Attributes["model"].(string)+":"+sp.Status)
		}
	}
	if strings.Join(tried, " ") != "gpt-4o-mini:error claude-3-5-haiku-20241022:ok" {
		t.Errorf("model spans %v, want the primary failed then the fallback", tried)
	}
	evs, err := e.store.EventList(ctx, x.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1]; last.Event != "done" || !strings.Contains(string(last.Data), `"model":"claude-3-5-haiku-20241022"`) {
		t.Errorf("terminal frame %s %s, want done naming the fallback", last.Event, last.Data)
	}

	// A primary cut after two streamed words is not handed on: the run fails with its error.
	oa.Push(llmtest.Reply{Text: []string{"Half ", "an ", "answer ", "cut"}, CutAfter: 2})
	before := len(an.Requests())
	e.run([]scenario{
		{name: "streamed then cut", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 200,
			fields: map[string]any{"data.status": "failed", "data.model": nil}},
	})
	if n := len(an.Requests()); n != before {
		t.Errorf("the fallback got %d requests after a streamed failure, want none", n-before)
	}

	// Every model failing: the error names each failure in order.
	oa.Push(down, down)
	an.Push(llmtest.Reply{Status: 529, ErrorMessage: "anthropic overloaded", Header: http.Header{"Retry-After-Ms": {"1"}}},
		llmtest.Reply{Status: 529, ErrorMessage: "anthropic overloaded", Header: http.Header{"Retry-After-Ms": {"1"}}})
	e.run([]scenario{
		{name: "all down", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 200,
			fields: map[string]any{"data.status": "failed"},
			check: func(t *testing.T, b map[string]any) {
				msg, _ := lookup(b, "data.error").(string)
				if !strings.Contains(msg, "model gpt-4o-mini: openai (503): overloaded; then model claude-3-5-haiku-20241022: anthropic (529)") {
					t.Errorf("error %q, want both failures in order", msg)
				}
			}},
	})
}

// TestFallbackModelsValidation: a fallback is checked at save time against what the version
// needs of its models, by the catalog's capabilities.
func TestFallbackModelsValidation(t *testing.T) {
	e := credentialRouterEnv(t)
	post := func(typ, cfg string) string {
		return `{"name":"V","type":"` + typ + `","config":` + cfg + `}`
	}
	e.run([]scenario{
		{name: "tools", method: "POST", path: "/api/v1/agents", status: 422, code: "validation_error",
			body:    post("agent", `{"model":"gpt-4o-mini","memory":{"enabled":true},"fallback_models":["gemini-2.0-flash-lite"]}`),
			message: "config.fallback_models[0]: model gemini-2.0-flash-lite cannot serve this version: it lacks the tools capability"},
		{name: "tools only for agent type", method: "POST", path: "/api/v1/agents", status: 201,
			body: post("simple", `{"model":"gpt-4o-mini","memory":{"enabled":true},"fallback_models":["gemini-2.0-flash-lite"]}`)},
		{name: "images", method: "POST", path: "/api/v1/agents", status: 422,
			body:    post("simple", `{"model":"gpt-4o-mini","input_schema":{"type":"object","properties":{"photo":{"type":"string","contentEncoding":"base64","contentMediaType":"image/png"}}},"fallback_models":["gpt-4o","deepseek-chat"]}`),
			message: "config.fallback_models[1]: model deepseek-chat cannot serve this version: it lacks the vision capability"},
		{name: "structured output", method: "POST", path: "/api/v1/agents", status: 201,
			body: post("simple", `{"model":"gpt-4o-mini","output_schema":{"type":"object"},"fallback_models":["claude-3-5-haiku-20241022"]}`)},
		{name: "itself", method: "POST", path: "/api/v1/agents", status: 422,
			body: post("simple", `{"model":"gpt-4o-mini","fallback_models":["gpt-4o-mini"]}`), message: "config.fallback_models[0]"},
		{name: "twice", method: "POST", path: "/api/v1/agents", status: 422,
			body: post("simple", `{"model":"gpt-4o-mini","fallback_models":["gpt-4o","gpt-4o"]}`), message: "config.fallback_models[1]"},
		{name: "unknown", method: "POST", path: "/api/v1/agents", status: 422,
			body: post("simple", `{"model":"gpt-4o-mini","fallback_models":["gpt-9"]}`), message: "config.fallback_models[0]"},
		{name: "pool weight", method: "POST", path: "/api/v1/credentials", status: 422, message: "metadata.weight",
			body: `{"name":"o","type":"api_key","provider":"openai","value":"sk-x","metadata":{"weight":-1}}`},
		{name: "too many", method: "POST", path: "/api/v1/agents", status: 422,
			body: post("simple", `{"model":"gpt-4o-mini","fallback_models":["a","b","c","d","e","f"]}`), message: "fallback_models"},
	})
}

// TestSimulationFailPerModel: on the emulator, simulation.fail names the models that fail
// (with the status given), so a fallback answers; true still fails every call mid-stream.
func TestSimulationFailPerModel(t *testing.T) {
	e := newTestEnv(t)
	var agent, broken string
	e.run([]scenario{
		{name: "agent", method: "POST", path: "/api/v1/agents", status: 201,
			body:   `{"name":"S","type":"simple","config":{"model":"gpt-4o-mini","max_retries":0,"fallback_models":["gpt-4o"],"simulation":{"fail":{"gpt-4o-mini":503}}}}`,
			fields: map[string]any{"data.config.simulation.fail": map[string]any{"gpt-4o-mini": 503.0}},
			check:  func(t *testing.T, b map[string]any) { agent = lookup(b, "data.id").(string) }},
		{name: "fail true", method: "POST", path: "/api/v1/agents", status: 201,
			body:   `{"name":"T","type":"simple","config":{"model":"gpt-4o-mini","fallback_models":["gpt-4o"],"simulation":{"fail":true,"fail_message":"broken"}}}`,
			fields: map[string]any{"data.config.simulation.fail": true},
			check:  func(t *testing.T, b map[string]any) { broken = lookup(b, "data.id").(string) }},
		{name: "bad status", method: "POST", path: "/api/v1/agents", status: 422,
			body: `{"name":"B","type":"simple","config":{"model":"gpt-4o-mini","simulation":{"fail":{"gpt-4o-mini":200}}}}`, message: "config.simulation.fail.gpt-4o-mini"},
	})
	e.run([]scenario{
		{name: "fallback answers", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 200,
			fields: map[string]any{"data.status": "completed", "data.model": "gpt-4o"}},
		{name: "mid-stream failure is final", method: "POST", path: "/api/v1/agents/" + broken + "/execute", body: `{"input":{"message":"hi"}}`, status: 200,
			fields: map[string]any{"data.status": "failed", "data.error": "model gpt-4o-mini: broken"}},
	})
}
