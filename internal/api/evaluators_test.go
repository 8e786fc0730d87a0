package api

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/eval"
)

func TestEvaluatorRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	rating, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "closeness", DataType: "numeric", Min: ptr(0.5), Max: ptr(1.0)})
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "verdict", DataType: "categorical",
		Categories: []client.ScoreCategory{{Label: "yes", Value: client.Ptr(float64(1))}}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := e.c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "answer-exact", Type: "exact_match"})
	if err != nil {
		t.Fatal(err)
	}
	if ev.ScoreName != "answer-exact" || ev.DataType != "boolean" || ev.ScoreConfigID != nil || ev.Config == nil {
		t.Fatalf("defaults: %+v", ev)
	}
	id := "/api/v1/evaluators/" + ev.ID
	var simID string
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/evaluators", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.type": "exact_match"}},
		{name: "list by type", method: "GET", path: "/api/v1/evaluators?type=regex", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list bad type", method: "GET", path: "/api/v1/evaluators?type=vibes", status: 400, message: "type"},
		{name: "create similarity under a config", method: "POST", path: "/api/v1/evaluators",
			body: `{"name":"close","type":"similarity","score_config_id":"` + rating.ID + `"}`, status: 201,
			fields: map[string]any{"data.score_name": "closeness", "data.data_type": "numeric", "data.score_config_id": rating.ID},
			check:  func(t *testing.T, b map[string]any) { simID = lookup(b, "data.id").(string) }},
		{name: "create duplicate", method: "POST", path: "/api/v1/evaluators", body: `{"name":"answer-exact","type":"contains"}`, status: 409, message: "answer-exact"},
		{name: "create unknown type", method: "POST", path: "/api/v1/evaluators", body: `{"name":"x","type":"vibes"}`, status: 422, message: "type: must be one of"},
		{name: "create missing type", method: "POST", path: "/api/v1/evaluators", body: `{"name":"x"}`, status: 422, message: "type"},
		{name: "create bad regex", method: "POST", path: "/api/v1/evaluators", body: `{"name":"x","type":"regex","config":{"pattern":"(x"}}`, status: 422, message: "config.pattern"},
		{name: "create unknown option", method: "POST", path: "/api/v1/evaluators", body: `{"name":"x","type":"contains","config":{"valu":"x"}}`, status: 422, message: "config.valu"},
		{name: "create config of the wrong data type", method: "POST", path: "/api/v1/evaluators", body: `{"name":"x","type":"regex","config":{"pattern":"a"},"score_config_id":"` + verdict.ID + `"}`,
			status: 422, message: "score_config_id: score config verdict"},
		{name: "create missing config", method: "POST", path: "/api/v1/evaluators", body: `{"name":"x","type":"similarity","score_config_id":"nope"}`, status: 422, message: "score_config_id: score config nope does not exist"},
		{name: "create score_name against the config", method: "POST", path: "/api/v1/evaluators", body: `{"name":"x","type":"similarity","score_name":"other","score_config_id":"` + rating.ID + `"}`,
			status: 422, message: "score_name"},
		{name: "create config wrong type", method: "POST", path: "/api/v1/evaluators", body: `{"name":"x","type":"regex","config":"a"}`, status: 400, message: "config"},

		{name: "test equal", method: "POST", path: id + "/test", body: `{"output":{"content":"Paris"},"expected_output":"paris"}`, status: 200,
			fields: map[string]any{"data.value": 1, "data.string_value": "true", "data.name": "answer-exact", "data.data_type": "boolean", "data.evaluator_id": ev.ID}},
		{name: "test differs", method: "POST", path: id + "/test", body: `{"output":{"content":"Lyon"},"expected_output":"paris"}`, status: 200,
			fields: map[string]any{"data.value": 0, "data.string_value": "false", "data.comment": `the output "lyon" differs from the expected "paris"`}},
		{name: "test without expected", method: "POST", path: id + "/test", body: `{"output":"x"}`, status: 422, message: "expected_output: is required"},
		{name: "test without output", method: "POST", path: id + "/test", body: `{"expected_output":"x"}`, status: 422, message: "output: is required"},
		{name: "test missing evaluator", method: "POST", path: "/api/v1/evaluators/nope/test", body: `{"output":"x"}`, status: 404},
		{name: "nothing stored", method: "GET", path: "/api/v1/scores", status: 200, fields: map[string]any{"pagination.total": 0}},
	})
	e.run([]scenario{
		{name: "score checked against its config", method: "POST", path: "/api/v1/evaluators/" + simID + "/test", body: `{"output":"abc","expected_output":"xyz"}`, status: 422,
			message: "value: must be at least 0.5 (the min of score config closeness), got 0"},
		{name: "score within the config", method: "POST", path: "/api/v1/evaluators/" + simID + "/test", body: `{"output":"kitten","expected_output":"sitten"}`, status: 200,
			fields: map[string]any{"data.config_id": rating.ID, "data.name": "closeness", "data.string_value": nil}},
		{name: "patch to a regex", method: "PATCH", path: id, body: `{"type":"regex","config":{"pattern":"^\\d+$"},"score_name":"digits"}`, status: 200,
			fields: map[string]any{"data.type": "regex", "data.score_name": "digits", "data.config.pattern": `^\d+$`}},
		{name: "test the regex", method: "POST", path: id + "/test", body: `{"output":{"content":"123"}}`, status: 200, fields: map[string]any{"data.value": 1}},
		{name: "patch a bad config", method: "PATCH", path: id, body: `{"config":{}}`, status: 422, message: "config.pattern: is required"},
		{name: "patch config away", method: "PATCH", path: "/api/v1/evaluators/" + simID, body: `{"score_config_id":null}`, status: 200,
			fields: map[string]any{"data.score_config_id": nil, "data.score_name": "close"}},
		{name: "patch rename conflict", method: "PATCH", path: id, body: `{"name":"close"}`, status: 409},
		{name: "patch missing", method: "PATCH", path: "/api/v1/evaluators/nope", body: `{"name":"y"}`, status: 404},
		{name: "get", method: "GET", path: id, status: 200, fields: map[string]any{"data.name": "answer-exact"}},
		{name: "delete", method: "DELETE", path: id, status: 200, fields: map[string]any{"data.id": ev.ID}},
		{name: "gone", method: "GET", path: id, status: 404},
	})
}

// TestEvaluatorTypesDocumented keeps the document's type enums in step with the types package
// eval knows.
func TestEvaluatorTypesDocumented(t *testing.T) {
	e := newTestEnv(t)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	_, raw, _, err := e.c.Raw(context.Background(), "GET", "/openapi.json", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Evaluator", "EvaluatorCreateRequest", "EvaluatorUpdateRequest"} {
		got := slices.Sorted(slices.Values(doc.Components.Schemas[name].Properties["type"].Enum))
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("no schema %s in %v", name, slices.Collect(maps.Keys(doc.Components.Schemas)))
		}
		if !slices.Equal(got, eval.Types()) {
			t.Errorf("%s.type enum %v, want %v", name, got, eval.Types())
		}
	}
}
