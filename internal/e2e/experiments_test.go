package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
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
// lease expires and completes it: the killed node's runs end failed as interrupted (their
// answers never reached the platform) and their items run again as new executions. Counted
// at the fake: every item's agent call is answered exactly once (the held calls of the killed
// node were received but never answered: their client was gone), and every item is judged
// once and scored once per evaluator.
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
	var mu sync.Mutex
	released := false
	open := func() {
		mu.Lock()
		defer mu.Unlock()
		if !released {
			released = true
			close(release)
		}
	}
	defer open()                                     // before fake.Close, which waits for the held requests
	answered := 0                                    // agent calls answered before the hold
	held, gone := map[string]int{}, map[string]int{} // per item: agent calls held, and those whose client left while held
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		tag := itemTag.FindString(string(req.Raw))
		if strings.Contains(string(req.Raw), judgeMarker) {
			return llmtest.Reply{Text: []string{`{"reasoning":"It answers ` + tag + `.","score":"pass"}`}, Usage: &llmtest.Usage{Prompt: 20, Completion: 8}}
		}
		mu.Lock()
		hold := answered >= n/4 && !released
		if hold {
			held[tag]++
		} else {
			answered++
		}
		mu.Unlock()
		if hold {
			select {
			case <-release:
			case <-req.Context().Done():
				mu.Lock()
				gone[tag]++
				mu.Unlock()
			}
		}
		return llmtest.Reply{Text: []string{"Answer ", tag}, Usage: &llmtest.Usage{Prompt: 5, Completion: 2}}
	}
	snapshot := func() (heldNow, goneNow map[string]int) {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(held), maps.Clone(gone)
	}
	heldNow := func() map[string]int { h, _ := snapshot(); return h }

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
	var interrupted []string // the killed node's executions
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
			for _, e := range running.Data {
				interrupted = append(interrupted, e.ID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready to kill after a minute: %+v, %d running, held %v, %d requests at the fake\n%s", cur.Progress, len(running.Data), h,
				len(fake.Requests()), victim.Logs())
		}
	}
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-victim.exited
	// The held calls see their client leave: they are never answered. Only then are new
	// calls let through, so that none of the dead node's is answered by mistake.
	inFlight, left := snapshot()
	for ; !maps.Equal(inFlight, left); inFlight, left = snapshot() {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("the fake did not see the killed node's calls end: held %v, client gone %v", inFlight, left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	open()

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
	if done.Status != "completed" || done.Progress.Completed != n || done.Progress.Failed != 0 {
		t.Fatalf("experiment after the kill: %+v (in flight at the kill: %v)\n%s", done, inFlight, survivor.Logs())
	}

	// Every item's agent answered exactly once; the calls held at the kill were received
	// twice (the killed node's, never answered, and the new node's), the others once. Every
	// item was judged once.
	received, answeredCalls := map[string]int{}, map[string]int{}
	judgeCalls := map[string]int{}
	for _, r := range fake.Requests() {
		tag := itemTag.FindString(string(r.Raw))
		switch {
		case tag == "":
		case strings.Contains(string(r.Raw), judgeMarker):
			judgeCalls[tag]++
		default:
			received[tag]++
			if r.Answered {
				answeredCalls[tag]++
			}
		}
	}
	rows, err := survivor.C.ExperimentResults(ctx, x.ID, client.ListExperimentResultsParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Data) != n {
		t.Fatalf("%d result rows, want %d", len(rows.Data), n)
	}
	for _, r := range rows.Data {
		tag := itemTag.FindString(fmt.Sprint(r.Input["message"]))
		attempts := 1 + inFlight[tag]
		if r.Status != "completed" || len(r.Scores) != 2 || judgeCalls[tag] != 1 || answeredCalls[tag] != 1 || received[tag] != attempts ||
			int(r.Attempts) != attempts || r.ExecutionID == nil || slices.Contains(interrupted, *r.ExecutionID) {
			t.Errorf("%s: %s with scores %v after %d judge calls, %d agent calls answered of %d received, %d attempts (held at the kill: %d)",
				tag, r.Status, r.Scores, judgeCalls[tag], answeredCalls[tag], received[tag], r.Attempts, inFlight[tag])
		}
	}

	// The killed node's executions stay in the ledger, failed as interrupted, listed with
	// the experiment's others.
	all, err := survivor.C.ExecutionList(ctx, client.ListExecutionsParams{ExperimentID: x.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Data) != n+concurrency {
		t.Errorf("%d executions listed for the experiment, want %d", len(all.Data), n+concurrency)
	}
	for _, id := range interrupted {
		e, err := survivor.C.ExecutionGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != "failed" || e.Error == nil || !strings.Contains(*e.Error, victim.Node) {
			t.Errorf("execution %s of the killed node %s: %s, %v", id, victim.Node, e.Status, e.Error)
		}
	}
	scores := evalScoresPerExecution(t, survivor.C, x.ID)
	for k, c := range scores {
		if c != 1 {
			t.Errorf("%s scored %d times", k, c)
		}
	}
	if len(scores) != 2*n {
		t.Errorf("%d (execution, score) pairs for %d items", len(scores), n)
	}
}
