package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// judgeMarker is in the system message of every judge call (eval's instructions).
const judgeMarker = "You are an evaluator judging"

var itemTag = regexp.MustCompile(`item-\d{3}`)

// experimentFake is a fake OpenAI server answering the agent ("Answer item-NNN", after
// delay) and the judge (pass, as structured JSON), counting both per item.
func experimentFake(delay time.Duration) *llmtest.Server {
	fake := llmtest.NewOpenAI()
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		tag := itemTag.FindString(string(req.Raw))
		if strings.Contains(string(req.Raw), judgeMarker) {
			return llmtest.Reply{Text: []string{`{"reasoning":"It answers ` + tag + `.","score":"pass"}`}, Usage: &llmtest.Usage{Prompt: 20, Completion: 8}}
		}
		return llmtest.Reply{Text: []string{"Answer ", tag}, Delay: delay, Usage: &llmtest.Usage{Prompt: 5, Completion: 2}}
	}
	return fake
}

// callsPerItem counts the fake's agent and judge calls per item tag.
func callsPerItem(fake *llmtest.Server) (agent, judge map[string]int) {
	agent, judge = map[string]int{}, map[string]int{}
	for _, r := range fake.Requests() {
		tag := itemTag.FindString(string(r.Raw))
		if tag == "" {
			continue
		}
		if strings.Contains(string(r.Raw), judgeMarker) {
			judge[tag]++
		} else {
			agent[tag]++
		}
	}
	return agent, judge
}

// experimentSetup makes the credential for the fake, an agent, a dataset of n items (even
// ones expecting the fake's answer, odd ones something else) and two evaluators.
func experimentSetup(t *testing.T, c *client.Client, fakeURL string, n int) (agentID, datasetID string, evaluators []string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "fake", Type: "api_key", Provider: "openai",
		Value: "sk-proj-experimentTEST000000000000000000", Metadata: map[string]any{"base_url": fakeURL + "/v1"}}); err != nil {
		t.Fatal(err)
	}
	agent := mustAgent(t, c, "simple", client.AgentConfig{Model: "gpt-4o-mini"})
	d, err := c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "Questions"})
	if err != nil {
		t.Fatal(err)
	}
	var items []client.DatasetItemRequest
	for i := range n {
		expected := fmt.Sprintf(`"Answer item-%03d"`, i)
		if i%2 == 1 {
			expected = `"Something else"`
		}
		items = append(items, client.DatasetItemRequest{Input: map[string]any{"message": fmt.Sprintf("Question item-%03d", i)}, ExpectedOutput: json.RawMessage(expected)})
	}
	if _, err := c.DatasetItemsAdd(ctx, d.ID, items); err != nil {
		t.Fatal(err)
	}
	for _, in := range []client.EvaluatorCreateRequest{
		{Name: "exact", Type: "exact_match"},
		{Name: "judged", Type: "llm_judge", Config: map[string]any{"model": "gpt-4o-mini", "prompt": "Question: {{input.message}}\nAnswer: {{output}}"}},
	} {
		ev, err := c.EvaluatorCreate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		evaluators = append(evaluators, ev.ID)
	}
	return agent.ID, d.ID, evaluators
}

// evalScoresPerExecution counts the eval scores of an experiment per execution and name.
func evalScoresPerExecution(t *testing.T, c *client.Client, experimentID string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for page := 1; ; page++ {
		l, err := c.ScoreList(context.Background(), client.ListScoresParams{Source: "eval", Page: page, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range l.Data {
			if sc.Metadata["experiment_id"] == experimentID && sc.ExecutionID != nil {
				seen[*sc.ExecutionID+"/"+sc.Name]++
			}
		}
		if len(l.Data) < 100 {
			return seen
		}
	}
}

// TestServeExperiments runs an experiment on `serve` (SQLite and PostgreSQL) whose agent and
// judge are answered by a fake OpenAI server: the progress streams, each item's agent and
// judge are called once, the summary holds both scores' means.
func TestServeExperiments(t *testing.T) {
	t.Parallel()
	forEachServeDB(t, func(t *testing.T, env map[string]string) {
		ctx := context.Background()
		fake := experimentFake(0)
		defer fake.Close()
		env["MODELS"] = "real"
		p := start(t, env, "serve")
		const n = 20
		agentID, datasetID, evaluators := experimentSetup(t, p.C, fake.URL, n)

		x, err := p.C.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: datasetID, AgentID: agentID, EvaluatorIds: evaluators, Concurrency: client.Ptr(int64(4))})
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.C.ExperimentStream(ctx, x.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Collect()
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != n+1 || evs[n].Event != "done" {
			t.Fatalf("stream: %d frames, last %+v", len(evs), evs[len(evs)-1])
		}
		done, err := p.C.ExperimentGet(ctx, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		if done.Status != "completed" || done.Progress.Completed != n {
			t.Fatalf("experiment: %+v", done)
		}
		if st := done.Summary.Score("exact"); st == nil || st.Count != n || *st.Mean != 0.5 {
			t.Fatalf("exact_match: %+v", st)
		}
		if st := done.Summary.Score("judged"); st == nil || st.Count != n || *st.Mean != 1 {
			t.Fatalf("judge: %+v", st)
		}
		if done.Summary.TotalTokens != n*7 || done.Summary.Cost <= 0 {
			t.Fatalf("summary totals: %+v", done.Summary)
		}
		agentCalls, judgeCalls := callsPerItem(fake)
		for i := range n {
			tag := fmt.Sprintf("item-%03d", i)
			if agentCalls[tag] != 1 || judgeCalls[tag] != 1 {
				t.Errorf("%s: %d agent calls, %d judge calls", tag, agentCalls[tag], judgeCalls[tag])
			}
		}
		if scores := evalScoresPerExecution(t, p.C, x.ID); len(scores) != 2*n {
			t.Fatalf("%d (execution, score) pairs, want %d", len(scores), 2*n)
		}
	})
}

// TestExperimentSurvivesKill runs an experiment on a `serve` process of a PostgreSQL database
// and kills it (SIGKILL) midway, at a moment the test chooses: a quarter of the items are
// recorded and the next ones' agent calls are held at the fake model, so that every run the
// process has is inside its model call (none between recording that it reached its model call
// and sending the request). A node started after the kill takes the experiment over once its
// lease expires and completes it. Counted at the fake: every item's agent is called exactly
// once (the killed node's in-flight items end failed as interrupted, after their one call;
// the rest run once on the new node), and every completed item is judged once and scored once
// per evaluator.
func TestExperimentSurvivesKill(t *testing.T) {
	pg := postgresURL(t)
	if pg == "" {
		t.Skip("TEST_DATABASE_URL is not set: the cluster needs PostgreSQL")
	}
	ctx := context.Background()
	const n, concurrency = 60, 4
	fake := llmtest.NewOpenAI()
	defer fake.Close()
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer open() // before fake.Close, which waits for the held requests
	var mu sync.Mutex
	answered, held := 0, map[string]int{} // agent calls answered before the hold; held per item
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		tag := itemTag.FindString(string(req.Raw))
		if strings.Contains(string(req.Raw), judgeMarker) {
			return llmtest.Reply{Text: []string{`{"reasoning":"It answers ` + tag + `.","score":"pass"}`}, Usage: &llmtest.Usage{Prompt: 20, Completion: 8}}
		}
		mu.Lock()
		hold := answered >= n/4
		if hold {
			held[tag]++
		} else {
			answered++
		}
		mu.Unlock()
		if hold {
			<-release
		}
		return llmtest.Reply{Text: []string{"Answer ", tag}, Usage: &llmtest.Usage{Prompt: 5, Completion: 2}}
	}
	heldNow := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(held)
	}

	const lease = 3 * time.Second
	env := serveEnv(t.TempDir())
	for k, v := range map[string]string{"DATABASE_URL": pg, "MODELS": "real", "LEASE_TIMEOUT": lease.String(), "HEARTBEAT_INTERVAL": "500ms",
		"LOG_LEVEL": "info", "RATE_LIMIT": "0", "SHUTDOWN_TIMEOUT": "2s"} {
		env[k] = v
	}
	// A first node makes the database, its key and the workspace's data, then stops: the
	// process below is the only node when the experiment starts, so it drives it.
	n0 := start(t, env, "serve")
	agentID, datasetID, evaluators := experimentSetup(t, n0.C, fake.URL, n)
	n0.stop(t)
	victim := startProcess(t, buildBinary(t), env)
	cv := client.New(victim.URL, client.WithAPIKey(n0.Key))
	x, err := cv.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: datasetID, AgentID: agentID, EvaluatorIds: evaluators,
		Concurrency: client.Ptr(int64(concurrency))})
	if err != nil {
		t.Fatal(err)
	}

	// Kill it once the first quarter is recorded (no judge call in flight) and the agent calls
	// held at the fake are all of the experiment's running executions, as many as its
	// concurrency lets run: no run is between its mark and its request, and none starts.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		cur, err := cv.ExperimentGet(ctx, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		running, err := cv.ExecutionList(ctx, client.ListExecutionsParams{ExperimentID: x.ID, Status: "running", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		h := heldNow()
		if cur.Progress.Completed == n/4 && cur.Progress.Failed == 0 && len(h) == concurrency && len(running.Data) == len(h) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready to kill after a minute: %+v, %d running, held %v\n%s", cur.Progress, len(running.Data), h, victim.Logs())
		}
	}
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-victim.exited
	open()
	inFlight := heldNow()

	// A new node completes it.
	survivor := start(t, env, "serve")
	var done *client.Experiment
	for {
		if done, err = survivor.C.ExperimentGet(ctx, x.ID); err != nil {
			t.Fatal(err)
		}
		if done.Finished() {
			break
		}
		if time.Since(killed) > time.Minute {
			t.Fatalf("experiment not finished a minute after the kill: %+v\n%s", done, survivor.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("experiment %s %s after the kill: %+v", done.Status, time.Since(killed).Round(time.Millisecond), done.Progress)
	if done.Status != "completed" || done.Progress.Completed != n-concurrency || done.Progress.Failed != concurrency {
		t.Fatalf("experiment after the kill: %+v (in flight at the kill: %v)", done, inFlight)
	}

	// Every item's agent called exactly once. The failed items are those whose calls were
	// held when the node died; every completed one was judged once.
	agentCalls, judgeCalls := callsPerItem(fake)
	rows, err := survivor.C.ExperimentResults(ctx, x.ID, client.ListExperimentResultsParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Data) != n {
		t.Fatalf("%d result rows, want %d", len(rows.Data), n)
	}
	completed := 0
	for _, r := range rows.Data {
		tag := itemTag.FindString(fmt.Sprint(r.Input["message"]))
		if agentCalls[tag] != 1 {
			t.Errorf("%s (%s): %d agent calls, want 1", tag, r.Status, agentCalls[tag])
		}
		switch r.Status {
		case "completed":
			completed++
			if inFlight[tag] != 0 || len(r.Scores) != 2 || judgeCalls[tag] != 1 {
				t.Errorf("%s completed with scores %v after %d judge calls (held at the kill: %v)", tag, r.Scores, judgeCalls[tag], inFlight[tag] != 0)
			}
		case "failed":
			if inFlight[tag] != 1 || judgeCalls[tag] != 0 {
				t.Errorf("%s failed, but its agent call was not held at the kill (%v), or it was judged %d times", tag, inFlight, judgeCalls[tag])
			}
			if r.Error == nil || !strings.Contains(*r.Error, victim.Node) {
				t.Errorf("%s failed, but not as a run of the killed node %s: %v", tag, victim.Node, r.Error)
			}
		default:
			t.Errorf("%s ended %s", tag, r.Status)
		}
	}
	scores := evalScoresPerExecution(t, survivor.C, x.ID)
	for k, c := range scores {
		if c != 1 {
			t.Errorf("%s scored %d times", k, c)
		}
	}
	if len(scores) != 2*completed {
		t.Errorf("%d (execution, score) pairs for %d completed items", len(scores), completed)
	}
}
