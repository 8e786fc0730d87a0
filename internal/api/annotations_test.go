package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/store"
)

// TestAnnotationQueues reviews two executions through a queue, on the emulator and on the
// server over PostgreSQL.
func TestAnnotationQueues(t *testing.T) {
	t.Run("emulator", func(t *testing.T) { annotationQueues(t, newTestEnv(t)) })
	t.Run("postgres", func(t *testing.T) { annotationQueues(t, newTestEnvOn(t, openTestPostgres(t), false)) })
}

func annotationQueues(t *testing.T, e *testEnv) {
	ctx := context.Background()
	verdict, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreate{Name: "verdict", DataType: "categorical",
		Categories: []client.ScoreCategory{{Label: "good", Value: 1}, {Label: "bad", Value: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreate{Name: "other", DataType: "boolean"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.c.AgentCreate(ctx, client.AgentCreate{Name: "Helper", Type: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	var xs []string
	for range 2 {
		x, err := e.c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x.ID)
	}
	q, err := e.c.AnnotationQueueCreate(ctx, client.AnnotationQueueCreate{Name: "review", ScoreConfigIDs: []string{verdict.ID}})
	if err != nil {
		t.Fatal(err)
	}
	base := "/api/v1/annotation-queues/" + q.ID
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/annotation-queues", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.score_config_ids.0": verdict.ID}},
		{name: "create duplicate", method: "POST", path: "/api/v1/annotation-queues", body: `{"name":"review","score_config_ids":["` + verdict.ID + `"]}`, status: 409},
		{name: "create without configs", method: "POST", path: "/api/v1/annotation-queues", body: `{"name":"x","score_config_ids":[]}`, status: 422, message: "score_config_ids"},
		{name: "create with a missing config", method: "POST", path: "/api/v1/annotation-queues", body: `{"name":"x","score_config_ids":["nope"]}`, status: 422, message: "score_config_ids[0]"},
		{name: "nothing to review yet", method: "POST", path: base + "/next", status: 204},
		{name: "add", method: "POST", path: base + "/items", body: `{"execution_ids":["` + xs[0] + `","` + xs[1] + `"]}`, status: 201, fields: map[string]any{"data.count": 2, "data.items.0.status": "pending"}},
		{name: "add again skips", method: "POST", path: base + "/items", body: `{"execution_ids":["` + xs[0] + `"]}`, status: 201, fields: map[string]any{"data.count": 0}},
		{name: "add a missing execution", method: "POST", path: base + "/items", body: `{"execution_ids":["` + xs[0] + `","nope"]}`, status: 422, message: "execution_ids[1]"},
		{name: "add none", method: "POST", path: base + "/items", body: `{"execution_ids":[]}`, status: 422, message: "execution_ids"},
		{name: "add to a missing queue", method: "POST", path: "/api/v1/annotation-queues/nope/items", body: `{"execution_ids":["` + xs[0] + `"]}`, status: 404},
		{name: "items", method: "GET", path: base + "/items", status: 200, fields: map[string]any{"pagination.total": 2}},
		{name: "get", method: "GET", path: base, status: 200, fields: map[string]any{"data.name": "review"}},
	})

	// Two claims get two items, oldest first; a third finds nothing.
	first, err := e.c.AnnotationItemNext(ctx, q.ID)
	if err != nil || first == nil || first.ExecutionID != xs[0] || first.Status != "claimed" || first.ClaimExpiresAt == nil {
		t.Fatalf("first claim: %+v %v", first, err)
	}
	second, err := e.c.AnnotationItemNext(ctx, q.ID)
	if err != nil || second == nil || second.ExecutionID != xs[1] {
		t.Fatalf("second claim: %+v %v", second, err)
	}
	if none, err := e.c.AnnotationItemNext(ctx, q.ID); err != nil || none != nil {
		t.Fatalf("third claim: %+v %v", none, err)
	}
	complete := base + "/items/" + first.ID + "/complete"
	e.run([]scenario{
		{name: "score under another config", method: "POST", path: complete, body: `{"scores":[{"config_id":"` + other.ID + `","value":1}]}`, status: 422, message: "scores[0].config_id"},
		{name: "score outside the config", method: "POST", path: complete, body: `{"scores":[{"config_id":"` + verdict.ID + `","string_value":"meh"}]}`, status: 422, message: "scores[0].string_value"},
		{name: "no scores", method: "POST", path: complete, body: `{"scores":[]}`, status: 422, message: "scores"},
		{name: "complete", method: "POST", path: complete, body: `{"scores":[{"config_id":"` + verdict.ID + `","string_value":"good","comment":"fine"}]}`, status: 200,
			fields: map[string]any{"data.item.status": "completed", "data.scores.0.source": "annotation", "data.scores.0.value": 1, "data.scores.0.execution_id": xs[0],
				"data.scores.0.metadata.annotation_queue_id": q.ID}},
		{name: "complete twice", method: "POST", path: complete, body: `{"scores":[{"config_id":"` + verdict.ID + `","string_value":"good"}]}`, status: 409},
		{name: "one score stored", method: "GET", path: "/api/v1/scores?execution_id=" + xs[0], status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "complete a missing item", method: "POST", path: base + "/items/nope/complete", body: `{"scores":[{"config_id":"` + verdict.ID + `","value":1}]}`, status: 404},
	})
	if e.key == "" {
		// The emulator's reset empties every evaluation table, in an order the foreign keys allow.
		if _, err := e.c.EvaluatorCreate(ctx, client.EvaluatorCreate{Name: "v", Type: "exact_match", ScoreConfigID: &other.ID}); err != nil {
			t.Fatal(err)
		}
		d, err := e.c.DatasetCreate(ctx, client.DatasetCreate{Name: "d"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.DatasetItemCreate(ctx, d.ID, client.DatasetItemCreate{Input: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		stats, err := e.c.StoreStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"annotation_queues", "annotation_items", "datasets", "dataset_items", "evaluators", "score_configs"} {
			if stats[k] != 0 {
				t.Errorf("after reset: %s = %d", k, stats[k])
			}
		}
		return
	}
	{
		// Another reviewer (another key) may not complete an item claimed by this one.
		k2 := e.newKey(&store.APIKey{Name: "reviewer 2", Scopes: store.Strings{"scores:write"}})
		req, _ := http.NewRequest("POST", e.ts.URL+base+"/items/"+second.ID+"/complete",
			strings.NewReader(`{"scores":[{"config_id":"`+verdict.ID+`","string_value":"bad"}]}`))
		req.Header.Set("X-API-Key", k2)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict {
			t.Fatalf("another reviewer completed a claimed item: %d", resp.StatusCode)
		}
	}
}
