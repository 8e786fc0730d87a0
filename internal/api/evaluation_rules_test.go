package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/store"
)

// onlineFixture is an agent, a regex evaluator that passes any non-empty output, and an
// exact_match one that cannot judge a run (online there is no expected output).
type onlineFixture struct {
	agent, other, anyText, exact string
}

func newOnlineFixture(t *testing.T, e *testEnv) onlineFixture {
	t.Helper()
	ctx := context.Background()
	var f onlineFixture
	for _, name := range []string{"Support", "Other"} {
		a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: name, Type: "simple"})
		if err != nil {
			t.Fatal(err)
		}
		if name == "Support" {
			f.agent = a.ID
		} else {
			f.other = a.ID
		}
	}
	ev, err := e.c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "answered", Type: "regex", Config: map[string]any{"pattern": "\\S"}})
	if err != nil {
		t.Fatal(err)
	}
	f.anyText = ev.ID
	ev, err = e.c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "exact", Type: "exact_match"})
	if err != nil {
		t.Fatal(err)
	}
	f.exact = ev.ID
	return f
}

// newJudge starts nothing: the test drives it with RunDue (or Start).
func newJudge(t *testing.T, e *testEnv, node string, lease time.Duration) *eval.Online {
	t.Helper()
	o := eval.NewOnline(eval.OnlineConfig{Store: e.store, Judge: e.srv.engine.Judge, Node: node, Lease: lease, Poll: 20 * time.Millisecond})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		o.Stop(ctx)
		e.store.SetNamedTerminalHook("online-eval", nil)
	})
	return o
}

func TestEvaluationRuleRoutes(t *testing.T) {
	e := newTestEnv(t)
	f := newOnlineFixture(t, e)
	var id string
	base := "/api/v1/evaluation-rules"
	e.run([]scenario{
		{name: "no evaluator", method: "POST", path: base, body: `{}`, status: 422, message: "evaluator_id"},
		{name: "unknown evaluator", method: "POST", path: base, body: `{"evaluator_id":"nope"}`, status: 422, message: "evaluator_id"},
		{name: "unknown agent", method: "POST", path: base, body: `{"evaluator_id":"` + f.anyText + `","agent_id":"nope"}`, status: 422, message: "agent_id"},
		{name: "sampling above 1", method: "POST", path: base, body: `{"evaluator_id":"` + f.anyText + `","sampling":1.5}`, status: 422, message: "sampling"},
		{name: "sampling not a number", method: "POST", path: base, body: `{"evaluator_id":"` + f.anyText + `","sampling":"half"}`, status: 400},
		{name: "a status runs do not end in", method: "POST", path: base, body: `{"evaluator_id":"` + f.anyText + `","filter":{"status":["running"]}}`,
			status: 422, message: "filter.status[0]"},
		{name: "an empty source", method: "POST", path: base, body: `{"evaluator_id":"` + f.anyText + `","filter":{"source":[" "]}}`,
			status: 422, message: "filter.source[0]"},
		{name: "defaults", method: "POST", path: base, body: `{"evaluator_id":"` + f.anyText + `"}`, status: 201,
			fields: map[string]any{"data.sampling": 1.0, "data.enabled": true, "data.agent_id": nil, "data.filter.status": []any{"completed"},
				"data.filter.source": []any{}, "data.judgments.pending": 0.0},
			check: func(t *testing.T, b map[string]any) { id = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "get", method: "GET", path: base + "/" + id, status: 200, fields: map[string]any{"data.evaluator_id": f.anyText}},
		{name: "list by evaluator", method: "GET", path: base + "?evaluator_id=" + f.anyText, status: 200, fields: map[string]any{"pagination.total": 1.0}},
		{name: "no judgment yet", method: "GET", path: base + "/" + id + "/judgments", status: 200, fields: map[string]any{"pagination.total": 0.0}},
		{name: "list by another evaluator", method: "GET", path: base + "?evaluator_id=" + f.exact, status: 200, fields: map[string]any{"pagination.total": 0.0}},
		{name: "disable, one agent, a filter", method: "PATCH", path: base + "/" + id, status: 200,
			body:   `{"enabled":false,"agent_id":"` + f.agent + `","sampling":0.25,"filter":{"status":["completed","failed"],"source":["api"],"metadata":{"tier":"gold"}}}`,
			fields: map[string]any{"data.enabled": false, "data.agent_id": f.agent, "data.sampling": 0.25, "data.filter.metadata.tier": "gold", "data.filter.status": []any{"completed", "failed"}}},
		{name: "list by agent", method: "GET", path: base + "?agent_id=" + f.agent, status: 200, fields: map[string]any{"pagination.total": 1.0}},
		{name: "every agent again", method: "PATCH", path: base + "/" + id, body: `{"agent_id":null}`, status: 200, fields: map[string]any{"data.agent_id": nil, "data.enabled": false}},
		{name: "patch checked like a create", method: "PATCH", path: base + "/" + id, body: `{"sampling":-0.1}`, status: 422, message: "sampling"},
		{name: "unknown rule", method: "PATCH", path: base + "/nope", body: `{"enabled":true}`, status: 404},
		{name: "delete", method: "DELETE", path: base + "/" + id, status: 200, fields: map[string]any{"data.id": id}},
		{name: "gone", method: "GET", path: base + "/" + id, status: 404},
	})
}

// TestSampledIsStable: sampling is a pure function of the ids, near the rate over many.
func TestSampledIsStable(t *testing.T) {
	in := 0
	for i := range 10000 {
		x := fmt.Sprintf("x%d", i)
		if eval.Sampled("rule", x, 0.3) != eval.Sampled("rule", x, 0.3) {
			t.Fatal("two answers for one execution")
		}
		if eval.Sampled("rule", x, 0.3) {
			in++
		}
		if eval.Sampled("rule", x, 0) || !eval.Sampled("rule", x, 1) {
			t.Fatal("rates 0 and 1 must take none and all")
		}
	}
	if in < 2700 || in > 3300 {
		t.Fatalf("rate 0.3 took %d of 10000", in)
	}
}

func TestOnlineEvaluation(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { onlineEvaluation(t, openTestStore(t, "memory")) })
	t.Run("postgres", func(t *testing.T) { onlineEvaluation(t, openTestPostgres(t)) })
}

// onlineEvaluation: each finished execution that a rule matches and samples is scored once
// (source eval, the rule's id), others not; a disabled rule scores nothing; a case the
// evaluator cannot judge fails at once, without retries.
func onlineEvaluation(t *testing.T, st *store.Store) {
	e := newTestEnv(t, onStore(st), asServer())
	ctx := context.Background()
	f := newOnlineFixture(t, e)
	judge := newJudge(t, e, "node-a", 0)
	mk := func(in client.EvaluationRuleCreateRequest) *client.EvaluationRule {
		t.Helper()
		r, err := e.c.EvaluationRuleCreate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	gold := mk(client.EvaluationRuleCreateRequest{EvaluatorID: f.anyText, Filter: client.RuleFilterRequest{Metadata: map[string]any{"tier": "gold"}}})
	half := mk(client.EvaluationRuleCreateRequest{EvaluatorID: f.anyText, AgentID: f.agent, Sampling: ptr(0.5)})
	off := mk(client.EvaluationRuleCreateRequest{EvaluatorID: f.anyText, Enabled: ptr(false)})
	chat := mk(client.EvaluationRuleCreateRequest{EvaluatorID: f.anyText, Filter: client.RuleFilterRequest{Source: []string{"chat"}}})
	exact := mk(client.EvaluationRuleCreateRequest{EvaluatorID: f.exact, AgentID: f.other})

	var support, other []string
	for i := range 16 {
		meta := map[string]any{"tier": "silver"}
		if i%2 == 0 {
			meta["tier"] = "gold"
		}
		agent := f.agent
		if i%4 == 3 {
			agent = f.other
		}
		x, err := e.c.Execute(ctx, agent, client.ExecuteRequest{Input: map[string]any{"message": fmt.Sprintf("question %d", i)}, Metadata: meta})
		if err != nil || x.Status != "completed" {
			t.Fatalf("execute: %+v %v", x, err)
		}
		if agent == f.agent {
			support = append(support, x.ID)
		} else {
			other = append(other, x.ID)
		}
	}
	n, err := judge.RunDue(ctx)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("each match scored once, by its rule", func(t *testing.T) {
		want := map[string]int{gold.ID: 8, off.ID: 0, chat.ID: 0}
		sampled := 0
		for _, x := range support {
			if eval.Sampled(half.ID, x, 0.5) {
				sampled++
			}
		}
		want[half.ID] = sampled
		if sampled == 0 || sampled == len(support) {
			t.Fatalf("sampling 0.5 took %d of %d", sampled, len(support))
		}
		if n != 8+sampled+len(other) {
			t.Fatalf("judged %d, want %d", n, 8+sampled+len(other))
		}
		for rule, count := range want {
			l, err := e.c.ScoreList(ctx, client.ListScoresParams{RuleID: rule, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, sc := range l.Data {
				if sc.Source != "eval" || sc.RuleID == nil || *sc.RuleID != rule || sc.ExecutionID == nil || seen[*sc.ExecutionID] ||
					sc.StringValue == nil || *sc.StringValue != "true" || sc.Metadata["evaluator_id"] != f.anyText {
					t.Fatalf("score of rule %s: %+v", rule, sc)
				}
				seen[*sc.ExecutionID] = true
				if rule == half.ID && !eval.Sampled(half.ID, *sc.ExecutionID, 0.5) {
					t.Fatalf("execution %s scored outside the sample", *sc.ExecutionID)
				}
			}
			if len(l.Data) != count {
				t.Fatalf("rule %s gave %d scores, want %d", rule, len(l.Data), count)
			}
			r, err := e.c.EvaluationRuleGet(ctx, rule)
			if err != nil || int(r.Judgments.Completed) != count || int(r.Judgments.Pending) != 0 {
				t.Fatalf("rule %s judgments %+v, want %d completed: %v", rule, r.Judgments, count, err)
			}
		}
	})

	t.Run("the summary of a rule's scores", func(t *testing.T) {
		sum, err := e.c.ScoreSummaries(ctx, client.SummarizeScoresParams{RuleID: gold.ID})
		if err != nil || len(sum.Data) != 1 || sum.Data[0].Count != 8 || sum.Data[0].Name != "answered" {
			t.Fatalf("summary: %+v %v", sum, err)
		}
	})

	t.Run("a case the evaluator cannot judge fails without retries", func(t *testing.T) {
		r, err := e.c.EvaluationRuleGet(ctx, exact.ID)
		if err != nil || int(r.Judgments.Failed) != len(other) || int(r.Judgments.Completed) != 0 || int(r.Judgments.Pending) != 0 {
			t.Fatalf("judgments %+v: %v", r.Judgments, err)
		}
		js, err := st.JudgmentList(ctx, e.ws, other[0])
		if err != nil || len(js) != 1 || js[0].LastError == nil || !strings.Contains(*js[0].LastError, "expected") {
			t.Fatalf("judgment: %+v %v", js, err)
		}
	})

	t.Run("nothing is judged twice", func(t *testing.T) {
		if n, err := judge.RunDue(ctx); n != 0 || err != nil {
			t.Fatalf("a second pass judged %d: %v", n, err)
		}
	})

	base := "/api/v1/evaluation-rules/"
	e.run([]scenario{
		{name: "failed judgments say why", method: "GET", path: base + exact.ID + "/judgments?status=failed", status: 200,
			fields: map[string]any{"pagination.total": float64(len(other)), "data.0.status": "failed", "data.0.attempts": 1.0, "data.0.score_id": nil},
			check: func(t *testing.T, b map[string]any) {
				if msg, _ := lookup(b, "data.0.last_error").(string); !strings.Contains(msg, "expected_output") {
					t.Errorf("last_error %q", msg)
				}
			}},
		{name: "completed judgments name their score", method: "GET", path: base + gold.ID + "/judgments", status: 200,
			fields: map[string]any{"pagination.total": 8.0, "data.0.status": "completed", "data.0.last_error": nil},
			check: func(t *testing.T, b map[string]any) {
				if id, _ := lookup(b, "data.0.score_id").(string); id == "" {
					t.Error("a completed judgment without its score")
				}
			}},
		{name: "an unknown state", method: "GET", path: base + gold.ID + "/judgments?status=done", status: 400, message: "status"},
		{name: "an unknown rule", method: "GET", path: base + "nope/judgments", status: 404},
	})
}

func TestOnlineEvaluationCrash(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { onlineCrash(t, openTestStore(t, dbs.SQLiteFile(t))) })
	t.Run("postgres", func(t *testing.T) { onlineCrash(t, openTestPostgres(t)) })
}

// onlineCrash: judgments recorded while no judge runs are made after a restart; a judgment
// whose node died mid-way is taken over when its lease expires, and the dead node's late
// answer writes nothing: every execution has exactly one score.
func onlineCrash(t *testing.T, st *store.Store) {
	e := newTestEnv(t, onStore(st), asServer())
	ctx := context.Background()
	f := newOnlineFixture(t, e)
	lease := 300 * time.Millisecond
	newJudge(t, e, "node-a", lease) // installs the hook; its loop never starts (the node is down)
	rule, err := e.c.EvaluationRuleCreate(ctx, client.EvaluationRuleCreateRequest{EvaluatorID: f.anyText})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 6
	for i := range runs {
		if _, err := e.c.Execute(ctx, f.agent, client.ExecuteRequest{Input: map[string]any{"message": fmt.Sprintf("q%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.c.EvaluationRuleGet(ctx, rule.ID)
	if err != nil || r.Judgments.Pending != runs {
		t.Fatalf("judgments recorded with the runs' end: %+v %v", r.Judgments, err)
	}

	// Node A claims every judgment, then dies before writing any score.
	claimed, err := st.JudgmentClaim(ctx, "node-a", time.Now(), lease, 100)
	if err != nil || len(claimed) != runs {
		t.Fatalf("claimed %d: %v", len(claimed), err)
	}
	b := newJudge(t, e, "node-b", lease) // the node that restarts
	if n, err := b.RunDue(ctx); n != 0 || err != nil {
		t.Fatalf("node b took %d judgments still leased to node a: %v", n, err)
	}
	time.Sleep(lease + 200*time.Millisecond)
	if n, err := b.RunDue(ctx); n != runs || err != nil {
		t.Fatalf("node b judged %d after the lease expired, want %d: %v", n, runs, err)
	}

	// Node A comes back and finishes its stale attempts: nothing is written.
	for _, j := range claimed {
		ok, err := st.JudgmentComplete(ctx, j.ID, "node-a", j.Attempts, &domain.Score{WorkspaceID: e.ws, Name: "answered",
			DataType: domain.ScoreBoolean, Value: ptr(1.0), ExecutionID: &j.ExecutionID, Source: domain.ScoreSourceEval, RuleID: &rule.ID})
		if ok || err != nil {
			t.Fatalf("a stale attempt wrote its score: %v %v", ok, err)
		}
	}
	l, err := e.c.ScoreList(ctx, client.ListScoresParams{RuleID: rule.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, sc := range l.Data {
		per[*sc.ExecutionID]++
	}
	if len(l.Data) != runs || len(per) != runs {
		t.Fatalf("%d scores over %d executions, want one each of %d", len(l.Data), len(per), runs)
	}
	if r, _ := e.c.EvaluationRuleGet(ctx, rule.ID); r.Judgments.Completed != runs || r.Judgments.Pending != 0 {
		t.Fatalf("judgments after the takeover: %+v", r.Judgments)
	}
}

func TestOnlineJudgeDoesNotDelayRuns(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { onlineNoDelay(t, openTestStore(t, "memory")) })
	t.Run("postgres", func(t *testing.T) { onlineNoDelay(t, openTestPostgres(t)) })
}

// onlineNoDelay: an llm_judge rule whose judge model (a fake OpenAI server) blocks until
// released. Runs answer while their judgments wait; once released, each gets its score,
// with the judge's reasoning as the comment and its cost on the score.
func onlineNoDelay(t *testing.T, st *store.Store) {
	e, fake := credentialedEnv(t, st)
	ctx := context.Background()
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // runs before fake.Close
	judging := make(chan struct{}, 16)
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		if _, judge := req.Body["response_format"]; !judge {
			return llmtest.Reply{Text: []string{"It ships today."}, Usage: &llmtest.Usage{Prompt: 10, Completion: 5}}
		}
		judging <- struct{}{}
		<-release
		return llmtest.Reply{Text: []string{`{"reasoning":"Direct.","score":"pass"}`}, Usage: &llmtest.Usage{Prompt: 100, Completion: 10}}
	}
	agent, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := e.c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "helpful", Type: "llm_judge",
		Config: map[string]any{"model": "gpt-4o-mini", "prompt": "Q: {{input.message}} A: {{output}}"}})
	if err != nil {
		t.Fatal(err)
	}
	rule, err := e.c.EvaluationRuleCreate(ctx, client.EvaluationRuleCreateRequest{EvaluatorID: ev.ID, AgentID: agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	judge := newJudge(t, e, "node-a", 0)
	judge.Start(ctx)

	execute := func() string {
		t.Helper()
		x, err := e.c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": "Where is my order?"}})
		if err != nil || x.Status != "completed" {
			t.Fatalf("execute: %+v %v", x, err)
		}
		return x.ID
	}
	first := execute()
	select {
	case <-judging:
	case <-time.After(10 * time.Second):
		t.Fatal("the first run's judgment never reached the judge")
	}
	// The judge holds the first judgment; the next run answers all the same.
	second := execute()
	once.Do(func() { close(release) })

	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := e.c.ScoreList(ctx, client.ListScoresParams{RuleID: rule.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Data) == 2 {
			got := map[string]bool{}
			for _, sc := range l.Data {
				got[*sc.ExecutionID] = true
				cost, _ := sc.Metadata["cost"].(float64)
				if sc.Comment != "Direct." || *sc.StringValue != "true" || cost <= 0 || sc.Metadata["judge_trace_id"] == nil {
					t.Fatalf("judge score: %+v", sc)
				}
			}
			if !got[first] || !got[second] {
				t.Fatalf("scores of %v, want %s and %s", got, first, second)
			}
			break
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(l.Data)
			t.Fatalf("scores after release: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
