package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
)

// TestAnnotationQueues walks a review: a queue over two score configs, executions added, two
// reviewers claiming in turn (never the same item), a completion writing annotation scores,
// and every refusal on the way.
func TestAnnotationQueues(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	runs := e.simpleRuns(t, 3)
	rating, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "rating", DataType: client.ScoreNumeric, Min: ptr(1.0), Max: ptr(5.0)})
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "verdict", DataType: "categorical",
		Categories: []client.ScoreCategory{{Label: "good", Value: client.Ptr(1.0)}, {Label: "bad", Value: client.Ptr(0.0)}}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "other", DataType: client.ScoreBoolean})
	if err != nil {
		t.Fatal(err)
	}
	var queue string
	e.run([]scenario{
		{name: "create", method: "POST", path: "/api/v1/annotation-queues", status: 201,
			body:   fmt.Sprintf(`{"name":"weekly review","description":"support answers","score_config_ids":[%q,%q]}`, rating.ID, verdict.ID),
			fields: map[string]any{"data.name": "weekly review", "data.pending": 0, "data.completed": 0, "data.score_config_ids.1": verdict.ID},
			check:  func(t *testing.T, body map[string]any) { queue = body["data"].(map[string]any)["id"].(string) }},
		{name: "create name taken", method: "POST", path: "/api/v1/annotation-queues", status: 409,
			body: fmt.Sprintf(`{"name":"weekly review","score_config_ids":[%q]}`, rating.ID)},
		{name: "create no configs", method: "POST", path: "/api/v1/annotation-queues", status: 422, message: "score_config_ids",
			body: `{"name":"x","score_config_ids":[]}`},
		{name: "create unknown config", method: "POST", path: "/api/v1/annotation-queues", status: 422, message: "score_config_ids[0]",
			body: `{"name":"x","score_config_ids":["nope"]}`},
		{name: "create config twice", method: "POST", path: "/api/v1/annotation-queues", status: 422, message: "score_config_ids[1]",
			body: fmt.Sprintf(`{"name":"x","score_config_ids":[%q,%q]}`, rating.ID, rating.ID)},
		{name: "create blank name", method: "POST", path: "/api/v1/annotation-queues", status: 422, message: "name",
			body: fmt.Sprintf(`{"name":" ","score_config_ids":[%q]}`, rating.ID)},
	})
	q := "/api/v1/annotation-queues/" + queue
	e.run([]scenario{
		{name: "add", method: "POST", path: q + "/items", status: 201, body: fmt.Sprintf(`{"execution_ids":[%q,%q,%q]}`, runs[0], runs[1], runs[2]),
			fields: map[string]any{"data.skipped": 0, "data.added.0.execution_id": runs[0], "data.added.2.status": "pending"}},
		{name: "add again skips", method: "POST", path: q + "/items", status: 201, body: fmt.Sprintf(`{"execution_ids":[%q]}`, runs[1]),
			fields: map[string]any{"data.skipped": 1, "data.added": []any{}}},
		{name: "add unknown execution adds nothing", method: "POST", path: q + "/items", status: 422, message: "execution_ids[1]",
			body: fmt.Sprintf(`{"execution_ids":[%q,"nope"]}`, runs[0])},
		{name: "add none", method: "POST", path: q + "/items", status: 422, message: "execution_ids", body: `{"execution_ids":[]}`},
		{name: "add to missing queue", method: "POST", path: "/api/v1/annotation-queues/nope/items", status: 404, body: fmt.Sprintf(`{"execution_ids":[%q]}`, runs[0])},
		{name: "get", method: "GET", path: q, status: 200, fields: map[string]any{"data.pending": 3}},
		{name: "list", method: "GET", path: "/api/v1/annotation-queues", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.id": queue}},
		{name: "items", method: "GET", path: q + "/items", status: 200, fields: map[string]any{"pagination.total": 3}},
		{name: "items bad status", method: "GET", path: q + "/items?status=done", status: 400, message: "status"},
		{name: "rename", method: "PATCH", path: q, status: 200, body: `{"name":"daily review"}`, fields: map[string]any{"data.name": "daily review"}},
		{name: "patch unknown config", method: "PATCH", path: q, status: 422, body: `{"score_config_ids":["nope"]}`, message: "score_config_ids[0]"},
	})

	// Two reviewers: each claim is theirs alone, and asking again returns the same item.
	alice := e.newKey(&domain.APIKey{Name: "alice", Scopes: domain.Strings{"scores:read", "scores:write"}})
	bob := e.newKey(&domain.APIKey{Name: "bob", Scopes: domain.Strings{"scores:read", "scores:write"}})
	next := func(key string) AnnotationClaim {
		t.Helper()
		var c AnnotationClaim
		if st := e.callData(t, key, "POST", q+"/next", "", &c); st != http.StatusOK {
			t.Fatalf("next: %d", st)
		}
		return c
	}
	a1 := next(alice)
	if a1.Item == nil || a1.Item.ExecutionID != runs[0] || a1.Execution == nil || a1.Execution.ID != runs[0] || a1.Queue.Pending != 3 {
		t.Fatalf("alice's claim: %+v", a1)
	}
	if again := next(alice); again.Item.ID != a1.Item.ID {
		t.Fatalf("alice's second next %s, want her claim %s", again.Item.ID, a1.Item.ID)
	}
	b1 := next(bob)
	if b1.Item == nil || b1.Item.ID == a1.Item.ID || *b1.Item.ClaimedByName != bob[:11] {
		t.Fatalf("bob's claim: %+v", b1.Item)
	}
	item := func(id string) string { return q + "/items/" + id }
	complete := func(id string) string { return item(id) + "/complete" }
	e.run([]scenario{
		{name: "complete another's claim", method: "POST", path: complete(a1.Item.ID), status: 409, message: "claimed by",
			header: map[string]string{"X-API-Key": bob}, body: fmt.Sprintf(`{"scores":[{"config_id":%q,"value":4}]}`, rating.ID)},
		{name: "complete with a config not of the queue", method: "POST", path: complete(a1.Item.ID), status: 422, message: "scores[0].config_id",
			header: map[string]string{"X-API-Key": alice}, body: fmt.Sprintf(`{"scores":[{"config_id":%q,"value":1}]}`, other.ID)},
		{name: "complete out of range writes nothing", method: "POST", path: complete(a1.Item.ID), status: 422, message: "scores[1].value",
			header: map[string]string{"X-API-Key": alice}, body: fmt.Sprintf(`{"scores":[{"config_id":%q,"string_value":"good"},{"config_id":%q,"value":9}]}`, verdict.ID, rating.ID)},
		{name: "complete without scores", method: "POST", path: complete(a1.Item.ID), status: 422, message: "scores",
			header: map[string]string{"X-API-Key": alice}, body: `{"scores":[]}`},
		{name: "complete", method: "POST", path: complete(a1.Item.ID), status: 200,
			header: map[string]string{"X-API-Key": alice},
			body:   fmt.Sprintf(`{"scores":[{"config_id":%q,"string_value":"good","comment":"fine"},{"config_id":%q,"value":4}]}`, verdict.ID, rating.ID),
			fields: map[string]any{"data.item.status": "completed", "data.item.claimed_by": nil, "data.item.completed_by_name": alice[:11],
				"data.scores.0.source": "annotation", "data.scores.0.execution_id": runs[0], "data.scores.0.value": 1, "data.scores.1.value": 4,
				"data.scores.0.author.name": alice[:11]}},
		{name: "complete twice", method: "POST", path: complete(a1.Item.ID), status: 409, message: "completed already",
			header: map[string]string{"X-API-Key": alice}, body: fmt.Sprintf(`{"scores":[{"config_id":%q,"value":4}]}`, rating.ID)},
		{name: "item", method: "GET", path: item(a1.Item.ID), status: 200, fields: map[string]any{"data.status": "completed"}},
		{name: "item missing", method: "GET", path: item("nope"), status: 404},
		{name: "pending left", method: "GET", path: q + "/items?status=pending", status: 200, fields: map[string]any{"pagination.total": 2}},
		{name: "counts", method: "GET", path: q, status: 200, fields: map[string]any{"data.pending": 2, "data.completed": 1}},
	})
	// The scores went where POST /scores puts them: a failed completion wrote none.
	if l, _, err := e.store.ScoreList(ctx, e.ws, domain.ScoreFilter{Source: domain.ScoreSourceAnnotation}, domain.Page{Page: 1, Limit: 10}); err != nil || len(l) != 2 {
		t.Fatalf("annotation scores: %d %v", len(l), err)
	}
	// Alice takes the last item; then nothing is left for her while bob holds his.
	a2 := next(alice)
	if a2.Item == nil || a2.Item.ID == b1.Item.ID {
		t.Fatalf("alice's next: %+v", a2.Item)
	}
	var done AnnotationCompleted
	if st := e.callData(t, alice, "POST", complete(a2.Item.ID), fmt.Sprintf(`{"scores":[{"config_id":%q,"value":2}]}`, rating.ID), &done); st != http.StatusOK {
		t.Fatalf("complete alice's second: %d", st)
	}
	if none := next(alice); none.Item != nil || none.Execution != nil || none.Queue == nil {
		t.Fatalf("nothing left, got %+v", none.Item)
	}
	// Deleting an execution takes its items with it; deleting the queue keeps the scores.
	e.run([]scenario{
		{name: "next with nothing left", method: "POST", path: q + "/next", status: 200, header: map[string]string{"X-API-Key": alice},
			fields: map[string]any{"data.item": nil, "data.execution": nil, "data.queue.pending": 1}},
		{name: "next for bob", method: "POST", path: q + "/next", status: 200, header: map[string]string{"X-API-Key": bob},
			fields: map[string]any{"data.item.id": b1.Item.ID, "data.execution.id": b1.Item.ExecutionID}},
		{name: "delete", method: "DELETE", path: q, status: 200, fields: map[string]any{"data.completed": 2, "data.pending": 1}},
		{name: "gone", method: "GET", path: q, status: 404},
		{name: "next on missing queue", method: "POST", path: q + "/next", status: 404},
	})
	if l, _, _ := e.store.ScoreList(ctx, e.ws, domain.ScoreFilter{Source: domain.ScoreSourceAnnotation}, domain.Page{Page: 1, Limit: 10}); len(l) != 3 {
		t.Fatalf("scores after the queue was deleted: %d", len(l))
	}
}

// TestAnnotationNextConcurrent: reviewers claiming at once never get the same item.
func TestAnnotationNextConcurrent(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	ids := e.simpleRuns(t, 6)
	cfg, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "ok", DataType: client.ScoreBoolean})
	if err != nil {
		t.Fatal(err)
	}
	queue, err := e.store.AnnotationQueueCreate(ctx, &domain.AnnotationQueue{WorkspaceID: e.ws, Name: "q", ScoreConfigIDs: domain.Strings{cfg.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.store.AnnotationItemsAdd(ctx, e.ws, queue.ID, ids); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]string{}
	var wg sync.WaitGroup
	for i := range 8 {
		key := e.newKey(&domain.APIKey{Name: fmt.Sprint("r", i), Scopes: domain.Strings{"scores:write"}})
		wg.Go(func() {
			var c AnnotationClaim
			if st := e.callData(t, key, "POST", "/api/v1/annotation-queues/"+queue.ID+"/next", "", &c); st != http.StatusOK {
				t.Errorf("next: %d", st)
				return
			}
			if c.Item == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if prev, dup := got[c.Item.ID]; dup {
				t.Errorf("item %s claimed by %s and %s", c.Item.ID, prev, key[:11])
			}
			got[c.Item.ID] = key[:11]
		})
	}
	wg.Wait()
	if len(got) != 6 {
		t.Fatalf("%d items claimed by 8 reviewers, want all 6", len(got))
	}
}

// TestScoreAgreement: kappa for categories, Pearson for numbers, and the refusals.
func TestScoreAgreement(t *testing.T) {
	e := newServerEnv(t)
	runs := e.simpleRuns(t, 11)
	// Judge and human labels on 10 executions: they agree on 8 (po = 0.8); each says good 6
	// times, so pe = 0.6·0.6 + 0.4·0.4 = 0.52 and kappa = 0.28 / 0.48.
	judge := strings.Split("good good good good good good bad bad bad bad", " ")
	human := strings.Split("good good good good good bad bad bad bad good", " ")
	// Numbers: human = 2·judge + 1 except the last pair.
	jn := []float64{1, 2, 3, 4, 5, 1, 2, 3, 4, 5}
	hn := []float64{3, 5, 7, 9, 11, 3, 5, 7, 9, 1}
	for i := range judge {
		x := struct{ ID string }{runs[i]}
		for name, label := range map[string]string{"judge": judge[i], "human": human[i]} {
			if i == 0 && name == "judge" { // an older judge score of the same execution is superseded
				e.postScore(t, fmt.Sprintf(`{"name":"judge","data_type":"categorical","string_value":"bad","execution_id":%q}`, x.ID))
				time.Sleep(2 * time.Millisecond) // creation times are in milliseconds: the next score is newer
			}
			e.postScore(t, fmt.Sprintf(`{"name":%q,"data_type":"categorical","string_value":%q,"execution_id":%q}`, name, label, x.ID))
		}
		e.postScore(t, fmt.Sprintf(`{"name":"judge_n","data_type":"numeric","value":%g,"execution_id":%q}`, jn[i], x.ID))
		e.postScore(t, fmt.Sprintf(`{"name":"human_n","data_type":"numeric","value":%g,"execution_id":%q}`, hn[i], x.ID))
	}
	// A judge score without its human pair is left out.
	e.postScore(t, fmt.Sprintf(`{"name":"judge","data_type":"categorical","string_value":"good","execution_id":%q}`, runs[10]))

	near := func(field string, want float64) func(t *testing.T, body map[string]any) {
		return func(t *testing.T, body map[string]any) {
			got, _ := body["data"].(map[string]any)[field].(float64)
			if d := got - want; d > 1e-9 || d < -1e-9 {
				t.Fatalf("%s = %v, want %v", field, got, want)
			}
		}
	}
	// Pearson of the numbers, computed independently of the store's sums.
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	mj, mh := mean(jn), mean(hn)
	var cov, vj, vh float64
	for i := range jn {
		cov += (jn[i] - mj) * (hn[i] - mh)
		vj += (jn[i] - mj) * (jn[i] - mj)
		vh += (hn[i] - mh) * (hn[i] - mh)
	}
	pearson := cov / math.Sqrt(vj*vh)
	e.run([]scenario{
		{name: "categorical", method: "GET", path: "/api/v1/scores/agreement?judge=judge&human=human", status: 200,
			fields: map[string]any{"data.count": 10, "data.data_type": "categorical", "data.pearson": nil}, check: func(t *testing.T, body map[string]any) {
				near("exact_agreement", 0.8)(t, body)
				near("kappa", 0.28/0.48)(t, body)
			}},
		{name: "numeric", method: "GET", path: "/api/v1/scores/agreement?judge=judge_n&human=human_n", status: 200,
			fields: map[string]any{"data.count": 10, "data.kappa": nil, "data.exact_agreement": 0}, check: func(t *testing.T, body map[string]any) {
				near("pearson", pearson)(t, body)
				near("mean_absolute_difference", 3.8)(t, body) // |2j+1-j| = j+1 (2…6, 2…5), then |5-1| = 4: 38 / 10
			}},
		{name: "no pairs", method: "GET", path: "/api/v1/scores/agreement?judge=judge&human=nobody", status: 200,
			fields: map[string]any{"data.count": 0, "data.data_type": nil, "data.exact_agreement": nil}},
		{name: "types differ", method: "GET", path: "/api/v1/scores/agreement?judge=judge&human=human_n", status: 422, message: "same data type"},
		{name: "missing name", method: "GET", path: "/api/v1/scores/agreement?judge=judge", status: 400, message: "human"},
		{name: "bad time", method: "GET", path: "/api/v1/scores/agreement?judge=judge&human=human&created_after=yesterday", status: 400, message: "created_after"},
	})
}

// callData sends one request with key (see send) and decodes the envelope's data of a
// success into out; it returns the status.
func (e *testEnv) callData(t *testing.T, key, method, path, body string, out any) int {
	t.Helper()
	status, raw := send(t, e, key, method, path, body)
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	if out != nil && status < 300 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			t.Fatal(err)
		}
	}
	return status
}

// postScore stores a score through the API with the test's key.
func (e *testEnv) postScore(t *testing.T, body string) {
	t.Helper()
	if st := e.callData(t, e.key, "POST", "/api/v1/scores", body, nil); st != http.StatusCreated {
		t.Fatalf("score %s: %d", body, st)
	}
}

// TestAnnotationSDK: the emulator serves the queues, and the Go SDK drives a review from
// claim to agreement.
func TestAnnotationSDK(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	x := struct{ ID string }{e.simpleRuns(t, 1)[0]}
	cfg, err := e.c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "human", DataType: client.ScoreBoolean})
	if err != nil {
		t.Fatal(err)
	}
	q, err := e.c.AnnotationQueueCreate(ctx, client.AnnotationQueueCreateRequest{Name: "review", ScoreConfigIds: []string{cfg.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if added, err := e.c.AnnotationItemsAdd(ctx, q.ID, []string{x.ID}); err != nil || len(added.Added) != 1 {
		t.Fatalf("add: %+v %v", added, err)
	}
	claim, err := e.c.AnnotationNext(ctx, q.ID)
	if err != nil || claim.Item == nil || claim.Execution.ID != x.ID || *claim.Item.ClaimedBy != "emulator" {
		t.Fatalf("next: %+v %v", claim, err)
	}
	done, err := e.c.AnnotationComplete(ctx, q.ID, claim.Item.ID, []client.AnnotationScore{{ConfigID: cfg.ID, StringValue: "true"}})
	if err != nil || done.Item.Status != "completed" || done.Scores[0].Source != client.ScoreSourceAnnotation {
		t.Fatalf("complete: %+v %v", done, err)
	}
	if _, err := e.c.ScoreCreate(ctx, client.ScoreCreateRequest{Name: "judge", DataType: client.ScoreBoolean, StringValue: "true", ExecutionID: x.ID}); err != nil {
		t.Fatal(err)
	}
	a, err := e.c.ScoreAgreement(ctx, client.ScoreAgreementParams{Judge: "judge", Human: "human"})
	if err != nil || a.Count != 1 || *a.ExactAgreement != 1 || a.Kappa != nil {
		t.Fatalf("agreement: %+v %v", a, err)
	}
	if l, err := e.c.AnnotationItemList(ctx, q.ID, client.ListAnnotationItemsParams{Status: "completed"}); err != nil || len(l.Data) != 1 {
		t.Fatalf("items: %+v %v", l, err)
	}
}

// simpleRuns creates an agent on the simulated model and runs it n times, returning the
// execution ids.
func (e *testEnv) simpleRuns(t *testing.T, n int) []string {
	t.Helper()
	ctx := context.Background()
	agent, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i := range ids {
		x, err := e.c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": fmt.Sprint("question ", i)}})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = x.ID
	}
	return ids
}
