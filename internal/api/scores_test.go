package api

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
)

func TestScoreConfigRoutes(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	rating, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "rating", DataType: client.ScoreNumeric, Min: ptr(1.0), Max: ptr(5.0)})
	if err != nil || *rating.Min != 1 || rating.Categories == nil {
		t.Fatalf("create: %+v %v", rating, err)
	}
	id := "/api/v1/score-configs/" + rating.ID
	e.run([]scenario{
		{name: "create categorical", method: "POST", path: "/api/v1/score-configs", status: 201,
			body:   `{"name":"verdict","data_type":"categorical","categories":[{"label":"good","value":1},{"label":"bad","value":0}],"description":"Reviewer's call"}`,
			fields: map[string]any{"data.categories.1.label": "bad", "data.min": nil, "data.archived": false}},
		{name: "create boolean", method: "POST", path: "/api/v1/score-configs", body: `{"name":"correct","data_type":"boolean"}`, status: 201,
			fields: map[string]any{"data.categories": []any{}}},
		{name: "create name taken", method: "POST", path: "/api/v1/score-configs", body: `{"name":"rating","data_type":"boolean"}`, status: 409, code: "conflict", message: rating.ID},
		{name: "create no name", method: "POST", path: "/api/v1/score-configs", body: `{"data_type":"boolean"}`, status: 422, code: "validation_error", message: "name"},
		{name: "create no data type", method: "POST", path: "/api/v1/score-configs", body: `{"name":"x"}`, status: 422, message: "data_type"},
		{name: "create bad data type", method: "POST", path: "/api/v1/score-configs", body: `{"name":"x","data_type":"stars"}`, status: 422, message: "data_type: must be one of"},
		{name: "create range on boolean", method: "POST", path: "/api/v1/score-configs", body: `{"name":"x","data_type":"boolean","min":0}`, status: 422, message: "min: only numeric"},
		{name: "create min above max", method: "POST", path: "/api/v1/score-configs", body: `{"name":"x","data_type":"numeric","min":3,"max":1}`, status: 422, message: "min: must be at most max"},
		{name: "create categorical without categories", method: "POST", path: "/api/v1/score-configs", body: `{"name":"x","data_type":"categorical"}`, status: 422, message: "categories"},
		{name: "create duplicate label", method: "POST", path: "/api/v1/score-configs", status: 422, message: "categories[1].label",
			body: `{"name":"x","data_type":"categorical","categories":[{"label":"a","value":1},{"label":"a","value":2}]}`},
		{name: "create wrong type", method: "POST", path: "/api/v1/score-configs", body: `{"name":"x","data_type":"numeric","min":"low"}`, status: 400, message: "min"},
		{name: "list", method: "GET", path: "/api/v1/score-configs", status: 200, fields: map[string]any{"pagination.total": 3, "data.2.id": rating.ID}},
		{name: "list by type", method: "GET", path: "/api/v1/score-configs?data_type=numeric", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list q", method: "GET", path: "/api/v1/score-configs?q=REVIEWER", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.name": "verdict"}},
		{name: "list bad type", method: "GET", path: "/api/v1/score-configs?data_type=stars", status: 400, message: "data_type"},
		{name: "list bad archived", method: "GET", path: "/api/v1/score-configs?archived=maybe", status: 400, message: "archived"},
		{name: "get", method: "GET", path: id, status: 200, fields: map[string]any{"data.name": "rating", "data.max": 5}},
		{name: "get missing", method: "GET", path: "/api/v1/score-configs/nope", status: 404, message: "score config nope"},
		{name: "patch widen", method: "PATCH", path: id, body: `{"max":10,"description":"1 to 10"}`, status: 200, fields: map[string]any{"data.max": 10, "data.min": 1, "data.description": "1 to 10"}},
		{name: "patch remove bound", method: "PATCH", path: id, body: `{"min":null}`, status: 200, fields: map[string]any{"data.min": nil, "data.max": 10}},
		{name: "patch data type", method: "PATCH", path: id, body: `{"data_type":"boolean"}`, status: 422, message: "data_type: cannot be changed"},
		{name: "patch same data type", method: "PATCH", path: id, body: `{"data_type":"numeric","archived":true}`, status: 200, fields: map[string]any{"data.archived": true}},
		{name: "patch rename taken", method: "PATCH", path: id, body: `{"name":"verdict"}`, status: 409, message: "name"},
		{name: "patch blank name", method: "PATCH", path: id, body: `{"name":" "}`, status: 422, message: "name"},
		{name: "patch categories on numeric", method: "PATCH", path: id, body: `{"categories":[{"label":"a","value":1}]}`, status: 422, message: "categories"},
		{name: "patch missing", method: "PATCH", path: "/api/v1/score-configs/nope", body: `{"archived":false}`, status: 404},
		{name: "list archived", method: "GET", path: "/api/v1/score-configs?archived=true", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.id": rating.ID}},
	})
	// The SDK sends null to remove a bound.
	got, err := e.c.ScoreConfigUpdate(ctx, rating.ID, client.ScoreConfigUpdateRequest{Max: client.Null[float64](), Archived: ptr(false)})
	if err != nil || got.Max != nil || got.Archived {
		t.Fatalf("SDK update: %+v %v", got, err)
	}
	if l, err := e.c.ScoreConfigList(ctx, client.ListScoreConfigsParams{Archived: ptr(false), DataType: client.ScoreNumeric}); err != nil || l.Pagination.Total != 1 {
		t.Fatalf("SDK list: %+v %v", l, err)
	}
	if _, err := e.c.ScoreConfigGet(ctx, rating.ID); err != nil {
		t.Fatal(err)
	}
}

func TestScoreRoutes(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	agent, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := e.store.TraceGet(ctx, e.ws, x.TraceID)
	if err != nil || len(tr.Spans) == 0 {
		t.Fatalf("trace %+v %v", tr, err)
	}
	span := tr.Spans[len(tr.Spans)-1].ID
	rating, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "rating", DataType: client.ScoreNumeric, Min: ptr(1.0), Max: ptr(5.0)})
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "verdict", DataType: client.ScoreCategorical,
		Categories: []client.ScoreCategory{{Label: "good", Value: client.Ptr(float64(1))}, {Label: "bad", Value: client.Ptr(float64(0))}}})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "old", DataType: client.ScoreBoolean, Archived: client.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	keyPrefix := auth.KeyPrefix(e.key)
	body := func(fields string) string { return `{"execution_id":"` + x.ID + `",` + fields + `}` }
	var first string
	e.run([]scenario{
		{name: "create numeric", method: "POST", path: "/api/v1/scores", status: 201,
			body: body(`"config_id":"` + rating.ID + `","value":4,"comment":"helpful","metadata":{"reviewer":"ann"}`),
			fields: map[string]any{"data.name": "rating", "data.data_type": "numeric", "data.value": 4, "data.string_value": nil,
				"data.trace_id": x.TraceID, "data.source": "api", "data.author.type": "api_key", "data.author.name": keyPrefix,
				"data.metadata.reviewer": "ann"},
			check: func(t *testing.T, b map[string]any) { first = lookup(b, "data.id").(string) }},
		{name: "create by label", method: "POST", path: "/api/v1/scores", status: 201,
			body:   `{"trace_id":"` + x.TraceID + `","span_id":"` + span + `","config_id":"` + verdict.ID + `","string_value":"bad","source":"annotation"}`,
			fields: map[string]any{"data.value": 0, "data.string_value": "bad", "data.execution_id": x.ID, "data.span_id": span, "data.source": "annotation"}},
		{name: "create by name", method: "POST", path: "/api/v1/scores", status: 201, body: body(`"name":"tone","data_type":"categorical","string_value":"warm","source":"eval"`),
			fields: map[string]any{"data.config_id": nil, "data.value": nil, "data.string_value": "warm"}},
		{name: "create boolean by name", method: "POST", path: "/api/v1/scores", status: 201, body: body(`"name":"resolved","data_type":"boolean","string_value":"true"`),
			fields: map[string]any{"data.value": 1}},
		{name: "create out of range", method: "POST", path: "/api/v1/scores", body: body(`"config_id":"` + rating.ID + `","value":6`), status: 422, code: "validation_error",
			message: "value: must be at most 5 (the max of score config rating), got 6"},
		{name: "create unknown category", method: "POST", path: "/api/v1/scores", body: body(`"config_id":"` + verdict.ID + `","string_value":"meh"`), status: 422,
			message: `string_value: must be one of "good", "bad"`},
		{name: "create archived config", method: "POST", path: "/api/v1/scores", body: body(`"config_id":"` + gone.ID + `","value":1`), status: 422, message: "config_id: score config old"},
		{name: "create data type mismatch", method: "POST", path: "/api/v1/scores", body: body(`"config_id":"` + rating.ID + `","data_type":"boolean","value":1`), status: 422, message: "data_type"},
		{name: "create name mismatch", method: "POST", path: "/api/v1/scores", body: body(`"config_id":"` + rating.ID + `","name":"stars","value":1`), status: 422, message: "name"},
		{name: "create missing config", method: "POST", path: "/api/v1/scores", body: body(`"config_id":"nope","value":1`), status: 422, message: "config_id: score config nope does not exist"},
		{name: "create no name", method: "POST", path: "/api/v1/scores", body: body(`"data_type":"numeric","value":1`), status: 422, message: "name: is required without config_id"},
		{name: "create no data type", method: "POST", path: "/api/v1/scores", body: body(`"name":"x","value":1`), status: 422, message: "data_type: is required"},
		{name: "create bad data type", method: "POST", path: "/api/v1/scores", body: body(`"name":"x","data_type":"stars","value":1`), status: 422, message: "data_type"},
		{name: "create bad source", method: "POST", path: "/api/v1/scores", body: body(`"name":"x","data_type":"numeric","value":1,"source":"robot"`), status: 422, message: "source"},
		{name: "create value as string", method: "POST", path: "/api/v1/scores", body: body(`"name":"x","data_type":"numeric","value":"4"`), status: 400, message: "value"},
		{name: "create no target", method: "POST", path: "/api/v1/scores", body: `{"name":"x","data_type":"numeric","value":1}`, status: 422, message: "needs a target"},
		{name: "create missing execution", method: "POST", path: "/api/v1/scores", body: `{"name":"x","data_type":"numeric","value":1,"execution_id":"nope"}`, status: 422,
			message: "execution_id: execution nope does not exist"},
		{name: "create missing span", method: "POST", path: "/api/v1/scores", body: `{"name":"x","data_type":"numeric","value":1,"trace_id":"` + x.TraceID + `","span_id":"nope"}`,
			status: 422, message: "span_id"},
		{name: "create missing session", method: "POST", path: "/api/v1/scores", body: `{"name":"x","data_type":"numeric","value":1,"session_id":"nope"}`, status: 422, message: "session_id"},
		{name: "create trace of another execution", method: "POST", path: "/api/v1/scores", body: body(`"name":"x","data_type":"numeric","value":1,"trace_id":"other"`),
			status: 422, message: "trace_id: execution " + x.ID + " has trace " + x.TraceID},
		{name: "list", method: "GET", path: "/api/v1/scores", status: 200, fields: map[string]any{"pagination.total": 4}},
		{name: "list by span", method: "GET", path: "/api/v1/scores?trace_id=" + x.TraceID + "&span_id=" + span, status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list by config", method: "GET", path: "/api/v1/scores?config_id=" + rating.ID, status: 200, fields: map[string]any{"pagination.total": 1},
			check: func(t *testing.T, b map[string]any) {
				if lookup(b, "data.0.id") != first {
					t.Fatalf("listed %v, want %s", lookup(b, "data.0.id"), first)
				}
			}},
		{name: "list by name and type", method: "GET", path: "/api/v1/scores?name=tone&data_type=categorical&source=eval", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list by execution", method: "GET", path: "/api/v1/scores?execution_id=" + x.ID + "&created_after=2000-01-01T00:00:00Z", status: 200, fields: map[string]any{"pagination.total": 4}},
		{name: "list before", method: "GET", path: "/api/v1/scores?created_before=2000-01-01T00:00:00Z", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list bad source", method: "GET", path: "/api/v1/scores?source=robot", status: 400, message: "source"},
		{name: "list bad type", method: "GET", path: "/api/v1/scores?data_type=stars", status: 400, message: "data_type"},
		{name: "list bad time", method: "GET", path: "/api/v1/scores?created_after=yesterday", status: 400, message: "created_after"},
		{name: "summary", method: "GET", path: "/api/v1/scores/summary", status: 200, fields: map[string]any{"pagination.total": 4,
			"data.0.name": "rating", "data.0.count": 1, "data.0.mean": 4, "data.0.buckets": []any{map[string]any{"lower": 4, "upper": 4, "count": 1}},
			"data.1.name": "resolved", "data.1.mean": 1, "data.1.categories": []any{map[string]any{"label": "true", "count": 1}},
			"data.3.name": "verdict", "data.3.mean": nil, "data.3.categories.0.label": "bad"}},
		{name: "summary filtered", method: "GET", path: "/api/v1/scores/summary?source=annotation&limit=1", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.name": "verdict"}},
		{name: "summary bad source", method: "GET", path: "/api/v1/scores/summary?source=robot", status: 400, message: "source"},
		{name: "get missing", method: "GET", path: "/api/v1/scores/nope", status: 404, message: "score nope"},
	})
	id := "/api/v1/scores/" + first
	e.run([]scenario{
		{name: "get", method: "GET", path: id, status: 200, fields: map[string]any{"data.comment": "helpful", "data.author.id": keyID(t, e, e.key)}},
		{name: "patch", method: "PATCH", path: id, body: `{"value":2,"comment":"less helpful","metadata":{}}`, status: 200,
			fields: map[string]any{"data.value": 2, "data.comment": "less helpful", "data.metadata": map[string]any{}, "data.name": "rating"}},
		{name: "patch out of range", method: "PATCH", path: id, body: `{"value":0}`, status: 422, message: "value: must be at least 1"},
		{name: "patch label on numeric", method: "PATCH", path: id, body: `{"string_value":"x"}`, status: 422, message: "string_value"},
		{name: "patch wrong type", method: "PATCH", path: id, body: `{"comment":5}`, status: 400, message: "comment"},
		{name: "patch missing", method: "PATCH", path: "/api/v1/scores/nope", body: `{"comment":"x"}`, status: 404},
		{name: "delete", method: "DELETE", path: id, status: 200, fields: map[string]any{"data.id": first, "data.value": 2}},
		{name: "delete again", method: "DELETE", path: id, status: 404},
	})
	// A signed-in user is the author of the scores they give.
	u := newUser(t, e, "ann@example.com", "", e.ws, domain.RoleMember)
	e.run([]scenario{
		{name: "create as user", method: "POST", path: "/api/v1/scores", header: bearer(token(t, u), e.ws), status: 201,
			body:   `{"session_id":"` + mustSession(t, e, agent.ID) + `","name":"csat","data_type":"numeric","value":9}`,
			fields: map[string]any{"data.author": map[string]any{"type": "user", "id": u.ID, "name": "ann@example.com"}}},
	})
	// The SDK covers every route.
	sc, err := e.c.ScoreCreate(ctx, client.ScoreCreateRequest{ConfigID: verdict.ID, Value: ptr(1.0), TraceID: x.TraceID})
	if err != nil || *sc.StringValue != "good" || *sc.ExecutionID != x.ID {
		t.Fatalf("SDK create: %+v %v", sc, err)
	}
	if sc, err = e.c.ScoreUpdate(ctx, sc.ID, client.ScoreUpdateRequest{StringValue: ptr("bad")}); err != nil || *sc.Value != 0 {
		t.Fatalf("SDK update: %+v %v", sc, err)
	}
	if l, err := e.c.ScoreList(ctx, client.ListScoresParams{ConfigID: verdict.ID}); err != nil || l.Pagination.Total != 2 {
		t.Fatalf("SDK list: %+v %v", l, err)
	}
	sum, err := e.c.ScoreSummaries(ctx, client.SummarizeScoresParams{Name: "verdict"})
	if err != nil || len(sum.Data) != 1 || sum.Data[0].Count != 2 || sum.Data[0].Categories[0] != (client.ScoreLabelCount{Label: "bad", Count: 2}) {
		t.Fatalf("SDK summary: %+v %v", sum, err)
	}
	if _, err := e.c.ScoreGet(ctx, sc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.ScoreDelete(ctx, sc.ID); err != nil {
		t.Fatal(err)
	}
}

func mustSession(t *testing.T, e *testEnv, agentID string) string {
	t.Helper()
	s, err := e.c.ChatSessionCreate(context.Background(), agentID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// TestEmulatorScores: the emulator serves scores too, with no author (it has no keys).
func TestEmulatorScores(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	agent, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "A", Type: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "create", method: "POST", path: "/api/v1/scores", body: fmt.Sprintf(`{"execution_id":%q,"name":"ok","data_type":"boolean","value":1}`, x.ID),
			status: 201, fields: map[string]any{"data.author": nil}},
		{name: "summary", method: "GET", path: "/api/v1/scores/summary", status: 200, fields: map[string]any{"data.0.mean": 1}},
	})
	raw, _ := json.Marshal(client.ScoreConfigUpdateRequest{Min: client.Null[float64](), Name: ptr("n")})
	if string(raw) != `{"min":null,"name":"n"}` {
		t.Fatalf("SDK update body %s", raw)
	}
}
