package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// TestJudgeSimulated runs llm_judge evaluators on the emulator's simulated model: the same
// case always gets the same score, within the judge's scale, and each call has its trace.
func TestJudgeSimulated(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	rating, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "helpfulness", DataType: "numeric", Min: ptr(1.0), Max: ptr(5.0)})
	if err != nil {
		t.Fatal(err)
	}
	prompt := "Question: {{input.message}}\nAnswer: {{output}}\nExpected: {{expected_output}}\nRate how helpful the answer is."
	judges := map[string]client.EvaluatorCreateRequest{
		"numeric":     {Name: "helpful", Type: "llm_judge", ScoreConfigID: rating.ID, Config: map[string]any{"model": "gpt-4o-mini", "prompt": prompt}},
		"boolean":     {Name: "correct", Type: "llm_judge", Config: map[string]any{"model": "gpt-4o-mini", "prompt": prompt}},
		"categorical": {Name: "tone", Type: "llm_judge", Config: map[string]any{"model": "gpt-4o-mini", "prompt": prompt, "score_type": "categorical", "labels": []any{"warm", "neutral", "curt"}}},
	}
	for dt, in := range judges {
		ev, err := e.c.EvaluatorCreate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.DataType) != dt {
			t.Fatalf("%s judge has data type %s", dt, ev.DataType)
		}
		seen := map[string]bool{}
		for _, answer := range []string{"Your parcel ships today.", "No idea.", "Check the tracking link we emailed.", "Your parcel ships today."} {
			req := client.EvaluatorTestRequest{Input: map[string]any{"message": "Where is my order?"}, Output: json.RawMessage(`{"content":"` + answer + `"}`),
				ExpectedOutput: json.RawMessage(`"It ships today"`)}
			r1, err := e.c.EvaluatorTest(ctx, ev.ID, req)
			if err != nil {
				t.Fatalf("%s: %v", dt, err)
			}
			r2, err := e.c.EvaluatorTest(ctx, ev.ID, req)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(mustAny(t, r1.Value), mustAny(t, r2.Value)) || domain.Deref(r1.StringValue) != domain.Deref(r2.StringValue) || r1.Comment != r2.Comment {
				t.Fatalf("%s judge gave the same case two scores: %+v, %+v", dt, r1, r2)
			}
			seen[domain.Deref(r1.StringValue)+"/"+string(mustJSONBytes(t, r1.Value))] = true
			switch dt {
			case "numeric":
				if *r1.Value < 1 || *r1.Value > 5 || r1.StringValue != nil || r1.ConfigID == nil {
					t.Fatalf("numeric judge: %+v", r1)
				}
			case "categorical":
				if !strings.Contains("warm neutral curt", *r1.StringValue) || r1.Value != nil {
					t.Fatalf("categorical judge: %+v", r1)
				}
			case "boolean":
				if *r1.StringValue != "true" && *r1.StringValue != "false" {
					t.Fatalf("boolean judge: %+v", r1)
				}
			}
			if r1.Comment == "" || r1.TraceID == nil || client.Val(r1.TokenUsage.TotalTokens) == 0 || *r1.TraceID == *r2.TraceID {
				t.Fatalf("judge result without its reasoning, trace or tokens: %+v", r1)
			}
			tr, err := e.c.TraceGet(ctx, *r1.TraceID)
			if err != nil || tr.Name != "eval "+in.Name || len(tr.Spans) != 1 || tr.Spans[0].Kind != "llm" || client.Val(tr.TokenUsage.TotalTokens) != client.Val(r1.TokenUsage.TotalTokens) {
				t.Fatalf("judge trace: %+v %v", tr, err)
			}
		}
	}
	e.run([]scenario{
		{name: "prompt with an unknown variable", method: "POST", path: "/api/v1/evaluators", status: 422, message: "config.prompt: uses {{answer}}",
			body: `{"name":"x","type":"llm_judge","config":{"model":"gpt-4o-mini","prompt":"{{answer}}"}}`},
		{name: "prompt that does not parse", method: "POST", path: "/api/v1/evaluators", status: 422, message: "config.prompt",
			body: `{"name":"x","type":"llm_judge","config":{"model":"gpt-4o-mini","prompt":"{{#output}}"}}`},
		{name: "unknown model", method: "POST", path: "/api/v1/evaluators", status: 422, message: "config.model",
			body: `{"name":"x","type":"llm_judge","config":{"model":"no-such-model","prompt":"{{output}}"}}`},
		{name: "no model", method: "POST", path: "/api/v1/evaluators", status: 422, message: "config.model: is required",
			body: `{"name":"x","type":"llm_judge","config":{"prompt":"{{output}}"}}`},
		{name: "categorical without labels", method: "POST", path: "/api/v1/evaluators", status: 422, message: "config.labels",
			body: `{"name":"x","type":"llm_judge","config":{"model":"gpt-4o-mini","prompt":"{{output}}","score_type":"categorical"}}`},
		{name: "score_type against the config", method: "POST", path: "/api/v1/evaluators", status: 422, message: "config.score_type",
			body: `{"name":"x","type":"llm_judge","score_config_id":"` + rating.ID + `","config":{"model":"gpt-4o-mini","prompt":"{{output}}","score_type":"boolean"}}`},
		{name: "empty range", method: "POST", path: "/api/v1/evaluators", status: 422, message: "config.max",
			body: `{"name":"x","type":"llm_judge","config":{"model":"gpt-4o-mini","prompt":"{{output}}","score_type":"numeric","min":3,"max":3}}`},
	})
}

// TestJudgeOpenAI runs a judge on a workspace's OpenAI credential, answered by a fake speaking
// the Chat Completions wire: the schema goes out as the native structured-output mode, the
// reasoning becomes the comment, and tokens and cost are recorded.
func TestJudgeOpenAI(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { judgeOpenAI(t, openTestStore(t, "memory")) })
	t.Run("postgres", func(t *testing.T) { judgeOpenAI(t, openTestPostgres(t)) })
}

// credentialedEnv is a server on st whose models are served through the workspace's credentials,
// with an OpenAI credential for a fake Chat Completions server (returned).
func credentialedEnv(t *testing.T, st *store.Store) (*testEnv, *llmtest.Server) {
	t.Helper()
	e := newTestEnv(t, onStore(st), asServer(), withRouter(func(st *store.Store, box *secretbox.Box) runtime.ModelRouter {
		return &runtime.CredentialRouter{Store: st, Secrets: box, Simulated: simulated.New()}
	}))
	fake := llmtest.NewOpenAI()
	t.Cleanup(fake.Close)
	if _, err := e.c.CredentialCreate(context.Background(), client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
		Value: "sk-test-judge-0000000000000000wxyz", Metadata: map[string]any{"base_url": fake.URL}}); err != nil {
		t.Fatal(err)
	}
	return e, fake
}

func judgeOpenAI(t *testing.T, st *store.Store) {
	e, fake := credentialedEnv(t, st)
	ctx := context.Background()
	ev, err := e.c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "helpful", Type: "llm_judge",
		Config: map[string]any{"model": "gpt-4o-mini", "prompt": "Q: {{input.message}} A: {{output}} ({{metadata}})", "score_type": "numeric", "min": 1.0, "max": 5.0}})
	if err != nil {
		t.Fatal(err)
	}
	fake.Push(llmtest.Reply{Text: []string{`{"reasoning":"Direct and correct.",`, `"score":4}`}, Usage: &llmtest.Usage{Prompt: 1000, Completion: 100}})
	res, err := e.c.EvaluatorTest(ctx, ev.ID, client.EvaluatorTestRequest{Input: map[string]any{"message": "Where is my order?"},
		Output: json.RawMessage(`{"content":"It ships today."}`), Metadata: map[string]any{"tier": "gold"}})
	if err != nil {
		t.Fatal(err)
	}
	if *res.Value != 4 || res.Comment != "Direct and correct." || client.Val(res.TokenUsage.TotalTokens) != 1100 || res.Cost <= 0 || res.TraceID == nil {
		t.Fatalf("judge result: %+v", res)
	}
	reqs := fake.Requests()
	body := reqs[len(reqs)-1].Body
	rf, _ := body["response_format"].(map[string]any)
	msgs, _ := json.Marshal(body["messages"])
	if rf["type"] != "json_schema" || !strings.Contains(string(msgs), `Q: Where is my order? A: It ships today. ({\"tier\":\"gold\"})`) {
		t.Fatalf("judge request: response_format %v, messages %s", rf, msgs)
	}
	tr, err := e.c.TraceGet(ctx, *res.TraceID)
	if err != nil || tr.Cost != res.Cost || tr.Spans[0].Provider == nil || *tr.Spans[0].Provider != "openai" {
		t.Fatalf("judge trace: %+v %v", tr, err)
	}

	fake.Push(llmtest.Reply{Text: []string{`{"reasoning":"Great.","score":9}`}})
	e.run([]scenario{
		{name: "answer outside the scale", method: "POST", path: "/api/v1/evaluators/" + ev.ID + "/test", body: `{"output":"x"}`, status: 422,
			message: "the score must be a number from 1 to 5"},
		{name: "a model no credential serves", method: "PATCH", path: "/api/v1/evaluators/" + ev.ID, status: 200,
			body: `{"config":{"model":"claude-3-5-haiku-20241022","prompt":"{{output}}","score_type":"numeric","min":1,"max":5}}`},
		{name: "no credential", method: "POST", path: "/api/v1/evaluators/" + ev.ID + "/test", body: `{"output":"x"}`, status: 422, message: "anthropic"},
	})
}

func mustAny(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(mustJSONBytes(t, v), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSONBytes(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
