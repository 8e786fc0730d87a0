package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/experiment"
	"github.com/agentplane/agentplane/internal/store"
)

// experimentBundle is what the experiment tests set up: an agent, a dataset of items with
// expected outputs, and three evaluators (a number, a judge's pass/fail, a judge's label).
type experimentBundle struct {
	agent      *client.Agent
	dataset    *client.Dataset
	evaluators []string
}

// withRunner starts an experiment runner on the test server's engine, stopped before it.
func withRunner(t *testing.T, e *testEnv) {
	t.Helper()
	r := experiment.NewRunner(experiment.Config{Store: e.store, Engine: e.srv.engine, PollInterval: 50 * time.Millisecond, Lease: 3 * time.Second})
	e.srv.cfg.Experiments = r
	r.Start(context.Background())
	t.Cleanup(r.Stop)
}

func setupExperiment(t *testing.T, e *testEnv, items int) experimentBundle {
	t.Helper()
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Helper", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "Questions"})
	if err != nil {
		t.Fatal(err)
	}
	var add []client.DatasetItemRequest
	for i := range items {
		add = append(add, client.DatasetItemRequest{Input: map[string]any{"message": fmt.Sprintf("Question %d about my order", i)},
			ExpectedOutput: json.RawMessage(fmt.Sprintf(`"Answer %d"`, i))})
	}
	if _, err := e.c.DatasetItemsAdd(ctx, d.ID, add); err != nil {
		t.Fatal(err)
	}
	prompt := "Question: {{input.message}}\nAnswer: {{output}}\nExpected: {{expected_output}}"
	var evs []string
	for _, in := range []client.EvaluatorCreateRequest{
		{Name: "close", Type: "similarity"},
		{Name: "correct", Type: "llm_judge", Config: map[string]any{"model": "gpt-4o-mini", "prompt": prompt}},
		{Name: "tone", Type: "llm_judge", Config: map[string]any{"model": "gpt-4o-mini", "prompt": prompt, "score_type": "categorical", "labels": []any{"warm", "curt"}}},
	} {
		ev, err := e.c.EvaluatorCreate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev.ID)
	}
	d, err = e.c.DatasetGet(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	return experimentBundle{agent: a, dataset: d, evaluators: evs}
}

// waitExperiment polls an experiment until it finished.
func waitExperiment(t *testing.T, c *client.Client, id string) *client.Experiment {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		x, err := c.ExperimentGet(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if x.Finished() {
			return x
		}
		if time.Now().After(deadline) {
			t.Fatalf("experiment %s still %s: %+v", id, x.Status, x.Progress)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestExperiments runs experiments on the simulated model end to end through the API: each
// item once, each evaluator's score once, a summary, results, a stream that resumes, and a
// comparison.
func TestExperiments(t *testing.T) {
	e := newTestEnv(t)
	withRunner(t, e)
	ctx := context.Background()
	b := setupExperiment(t, e, 5)

	x, err := e.c.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: b.dataset.ID, AgentID: b.agent.ID, EvaluatorIds: b.evaluators, Concurrency: client.Ptr(int64(2))})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("created", func(t *testing.T) {
		if x.Status != "pending" && x.Status != "running" || x.Progress.Total != 5 || x.DatasetVersion != b.dataset.Version || x.VersionID == "" || x.Name != "Helper on Questions" {
			t.Fatalf("new experiment: %+v", x)
		}
	})
	t.Run("stream from the start", func(t *testing.T) {
		s, err := e.c.ExperimentStream(ctx, x.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Collect()
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 6 || evs[5].Event != "done" || evs[5].ID != 6 {
			t.Fatalf("stream: %+v", evs)
		}
		for i, ev := range evs[:5] {
			if ev.Event != "item" || ev.ID != i+1 {
				t.Fatalf("frame %d: %+v", i, ev)
			}
		}
	})
	done := waitExperiment(t, e.c, x.ID)
	t.Run("summary", func(t *testing.T) {
		if done.Status != "completed" || done.Progress != (client.ExperimentProgress{Total: 5, Completed: 5}) || done.StartedAt == nil || done.CompletedAt == nil {
			t.Fatalf("finished experiment: %+v", done)
		}
		sm := done.Summary
		if len(sm.Scores) != 3 || sm.LatencyP50Ms == nil || sm.LatencyP95Ms == nil || sm.TotalTokens == 0 {
			t.Fatalf("summary: %+v", sm)
		}
		for _, name := range []string{"close", "correct"} {
			if st := sm.Score(name); st == nil || st.Count != 5 || st.Mean == nil || *st.Mean < 0 || *st.Mean > 1 {
				t.Fatalf("score %s: %+v", name, st)
			}
		}
		if st := sm.Score("tone"); st == nil || st.Count != 5 || st.Mean != nil || st.Distribution["warm"]+st.Distribution["curt"] != 5 {
			t.Fatalf("categorical score: %+v", st)
		}
	})
	t.Run("each item ran once as an execution of the experiment", func(t *testing.T) {
		runs, err := e.c.ExecutionList(ctx, client.ListExecutionsParams{Source: "experiment"})
		if err != nil {
			t.Fatal(err)
		}
		if runs.Pagination.Total != 5 {
			t.Fatalf("%d executions of source experiment", runs.Pagination.Total)
		}
		for _, r := range runs.Data {
			if r.Metadata["experiment_id"] != x.ID || r.Status != "completed" {
				t.Fatalf("execution: %+v", r)
			}
		}
		// The experiment_id filter finds them through the experiment's items.
		for id, want := range map[string]int64{x.ID: 5, "no-such-experiment": 0} {
			l, err := e.c.ExecutionList(ctx, client.ListExecutionsParams{ExperimentID: id})
			if err != nil || l.Pagination.Total != want {
				t.Fatalf("executions of experiment %s: %+v %v, want %d", id, l, err, want)
			}
			s, err := e.c.ScoreList(ctx, client.ListScoresParams{ExperimentID: id, Limit: 100})
			if err != nil || s.Pagination.Total != 3*want {
				t.Fatalf("scores of experiment %s: %+v %v, want %d", id, s, err, 3*want)
			}
		}
	})
	t.Run("each evaluator scored each run once", func(t *testing.T) {
		scores, err := e.c.ScoreList(ctx, client.ListScoresParams{Source: "eval", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, sc := range scores.Data {
			if sc.Metadata["experiment_id"] != x.ID || sc.ExecutionID == nil {
				t.Fatalf("score: %+v", sc)
			}
			seen[*sc.ExecutionID+"/"+sc.Name]++
		}
		if len(scores.Data) != 15 || len(seen) != 15 {
			t.Fatalf("%d eval scores over %d (execution, name) pairs, want 15", len(scores.Data), len(seen))
		}
	})
	t.Run("results", func(t *testing.T) {
		page, err := e.c.ExperimentResults(ctx, x.ID, client.ListExperimentResultsParams{Limit: 2, Page: 3})
		if err != nil {
			t.Fatal(err)
		}
		if page.Pagination.Total != 5 || len(page.Data) != 1 || page.Data[0].Position != 4 {
			t.Fatalf("results page 3: %+v", page)
		}
		r := page.Data[0]
		if r.ExecutionID == nil || r.Status != "completed" || len(r.Output) == 0 || string(r.ExpectedOutput) != `"Answer 4"` || len(r.Scores) != 3 || r.DurationMs == nil {
			t.Fatalf("result row: %+v", r)
		}
	})
	t.Run("stream resumes after an id and ends past the terminal frame", func(t *testing.T) {
		s, err := e.c.ExperimentStream(ctx, x.ID, 3)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Collect()
		if err != nil || len(evs) != 3 || evs[0].ID != 4 || evs[2].Event != "done" {
			t.Fatalf("resumed stream: %+v %v", evs, err)
		}
		s, err = e.c.ExperimentStream(ctx, x.ID, 6)
		if err != nil || !s.Ended() {
			t.Fatalf("stream past its end: %v", err)
		}
		s.Close()
		s, err = e.c.ExperimentStream(ctx, x.ID, -1)
		if err != nil {
			t.Fatal(err)
		}
		if evs, err := s.Collect(); err != nil || len(evs) != 1 || evs[0].Event != "done" {
			t.Fatalf("stream of a finished experiment: %+v %v", evs, err)
		}
	})
	t.Run("compare", func(t *testing.T) {
		y, err := e.c.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: b.dataset.ID, AgentID: b.agent.ID, EvaluatorIds: b.evaluators[:1]})
		if err != nil {
			t.Fatal(err)
		}
		waitExperiment(t, e.c, y.ID)
		c, err := e.c.ExperimentCompare(ctx, x.ID, y.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Experiments) != 2 || len(c.Items) != 5 || len(c.Scores) != 3 || len(c.Items[0].Runs) != 2 || c.Items[0].Runs[1].Status == "" {
			t.Fatalf("comparison: %+v", c)
		}
		for _, sc := range c.Scores {
			if sc.Name == "close" && (sc.Diffs[0] == nil || *sc.Diffs[0] != 0 || sc.Diffs[1] == nil || *sc.Diffs[1] != 0) {
				t.Fatalf("the same deterministic evaluator on the same outputs differs: %+v", sc)
			}
			if sc.Name == "correct" && (sc.Means[1] != nil || sc.Diffs[1] != nil) {
				t.Fatalf("a score the second experiment has not: %+v", sc)
			}
		}
	})
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/experiments?dataset_id=" + b.dataset.ID, status: 200, fields: map[string]any{"pagination.total": 2}},
		{name: "list by agent and status", method: "GET", path: "/api/v1/experiments?agent_id=" + b.agent.ID + "&status=completed", status: 200, fields: map[string]any{"pagination.total": 2}},
		{name: "list by bad status", method: "GET", path: "/api/v1/experiments?status=done", status: 400, message: "status"},
		{name: "get", method: "GET", path: "/api/v1/experiments/" + x.ID, status: 200, fields: map[string]any{"data.progress.completed": 5, "data.status": "completed"}},
		{name: "results", method: "GET", path: "/api/v1/experiments/" + x.ID + "/results?limit=2", status: 200,
			fields: map[string]any{"pagination.total": 5, "pagination.total_pages": 3, "data.0.position": 0, "data.1.status": "completed"}},
		{name: "stream", method: "GET", path: "/api/v1/experiments/" + x.ID + "/stream", header: map[string]string{"Last-Event-ID": "4"}, status: 200, sse: true},
		{name: "compare", method: "GET", path: "/api/v1/experiments/compare?ids=" + x.ID + "," + x.ID, status: 200, fields: map[string]any{"data.scores.0.name": "close"}},
		{name: "get missing", method: "GET", path: "/api/v1/experiments/nope", status: 404, message: "experiment nope"},
		{name: "results of a missing one", method: "GET", path: "/api/v1/experiments/nope/results", status: 404},
		{name: "stream of a missing one", method: "GET", path: "/api/v1/experiments/nope/stream", status: 404},
		{name: "stream with a bad id", method: "GET", path: "/api/v1/experiments/" + x.ID + "/stream", header: map[string]string{"Last-Event-ID": "x"}, status: 400},
		{name: "cancel a finished one", method: "POST", path: "/api/v1/experiments/" + x.ID + "/cancel", status: 409, message: "completed"},
		{name: "compare one", method: "GET", path: "/api/v1/experiments/compare?ids=" + x.ID, status: 400, message: "ids"},
		{name: "compare a missing one", method: "GET", path: "/api/v1/experiments/compare?ids=" + x.ID + ",nope", status: 404},
		{name: "create without a dataset", method: "POST", path: "/api/v1/experiments", body: `{"agent_id":"` + b.agent.ID + `"}`, status: 422, message: "dataset_id"},
		{name: "create on a missing dataset", method: "POST", path: "/api/v1/experiments", body: `{"dataset_id":"nope","agent_id":"` + b.agent.ID + `"}`, status: 422, message: "dataset_id"},
		{name: "create with a missing version", method: "POST", path: "/api/v1/experiments",
			body: `{"dataset_id":"` + b.dataset.ID + `","agent_id":"` + b.agent.ID + `","version_id":"nope"}`, status: 422, message: "version_id"},
		{name: "create with a missing evaluator", method: "POST", path: "/api/v1/experiments",
			body: `{"dataset_id":"` + b.dataset.ID + `","agent_id":"` + b.agent.ID + `","evaluator_ids":["nope"]}`, status: 422, message: "evaluator_ids[0]"},
		{name: "create with too much concurrency", method: "POST", path: "/api/v1/experiments",
			body: `{"dataset_id":"` + b.dataset.ID + `","agent_id":"` + b.agent.ID + `","concurrency":65}`, status: 422, message: "concurrency"},
		{name: "create with a wrong type", method: "POST", path: "/api/v1/experiments", body: `{"dataset_id":1}`, status: 400, message: "dataset_id"},
	})
}

// TestExperimentCancel cancels an experiment no node has taken yet: its items are cancelled
// and its stream ends with an error frame.
func TestExperimentCancel(t *testing.T) {
	e := newTestEnv(t) // no runner: the experiment stays pending
	ctx := context.Background()
	b := setupExperiment(t, e, 3)
	x, err := e.c.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: b.dataset.ID, AgentID: b.agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.c.ExperimentCancel(ctx, x.ID)
	if err != nil || c.Status != "cancelled" || c.CompletedAt == nil {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	rows, err := e.c.ExperimentResults(ctx, x.ID, client.ListExperimentResultsParams{})
	if err != nil || len(rows.Data) != 3 || rows.Data[0].Status != "cancelled" || rows.Data[0].ExecutionID != nil {
		t.Fatalf("results of a cancelled experiment: %+v %v", rows, err)
	}
	s, err := e.c.ExperimentStream(ctx, x.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Collect()
	if err != nil || len(evs) != 1 || evs[0].Event != "error" || evs[0].ErrorCode() != "cancelled" || evs[0].ID != 1 {
		t.Fatalf("stream of a cancelled experiment: %+v %v", evs, err)
	}
	e.run([]scenario{
		{name: "cancel again", method: "POST", path: "/api/v1/experiments/" + x.ID + "/cancel", status: 409, message: "cancelled"},
		{name: "cancel a missing one", method: "POST", path: "/api/v1/experiments/nope/cancel", status: 404},
	})
	t.Run("an empty dataset", func(t *testing.T) {
		d, err := e.c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "Empty"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.c.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: d.ID, AgentID: b.agent.ID})
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Status != 409 {
			t.Fatalf("experiment on an empty dataset: %v", err)
		}
	})
}

// TestExperimentScopes: starting an experiment needs datasets:read besides agents:execute.
func TestExperimentScopes(t *testing.T) {
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newTestEnv(t, onStore(st), asServer())
	b := setupExperiment(t, e, 1)
	execOnly := e.newKey(&domain.APIKey{Name: "exec", Scopes: domain.Strings{"agents:execute"}})
	readOnly := e.newKey(&domain.APIKey{Name: "read", Scopes: domain.Strings{"datasets:read"}})
	body := `{"dataset_id":"` + b.dataset.ID + `","agent_id":"` + b.agent.ID + `"}`
	e.run([]scenario{
		{name: "create without datasets:read", method: "POST", path: "/api/v1/experiments", body: body, header: map[string]string{"X-API-Key": execOnly}, status: 403, message: "datasets:read"},
		{name: "create without agents:execute", method: "POST", path: "/api/v1/experiments", body: body, header: map[string]string{"X-API-Key": readOnly}, status: 403, message: "agents:execute"},
		{name: "list with datasets:read", method: "GET", path: "/api/v1/experiments", header: map[string]string{"X-API-Key": readOnly}, status: 200},
		{name: "create with both", method: "POST", path: "/api/v1/experiments", body: body, status: 202, fields: map[string]any{"data.status": "pending"}},
	})
}
