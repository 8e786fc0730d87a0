package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// TestOnlineEvaluationKill9: a `serve` process judges the runs an evaluation rule matches with
// a judge model (a fake OpenAI server) that holds every answer; the process is killed with
// SIGKILL while its judge calls are in flight. Another node takes the judgments over when
// their leases expire: every run gets exactly one score, each judged once more, and no run
// is repeated.
func TestOnlineEvaluationKill9(t *testing.T) {
	pg := postgresURL(t)
	if pg == "" {
		t.Skip("TEST_DATABASE_URL is not set: two nodes need PostgreSQL")
	}
	ctx := context.Background()
	fake := llmtest.NewOpenAI()
	defer fake.Close()
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer open() // runs before fake.Close
	var mu sync.Mutex
	judged := map[string]int{} // question -> judge calls
	agentCalls := 0
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		if _, judge := req.Body["response_format"]; !judge {
			mu.Lock()
			agentCalls++
			mu.Unlock()
			return llmtest.Reply{Text: []string{"It ships today."}, Usage: &llmtest.Usage{Prompt: 10, Completion: 5}}
		}
		q := "?"
		for i := range 3 {
			if strings.Contains(string(req.Raw), fmt.Sprintf("question-%d", i)) {
				q = fmt.Sprintf("question-%d", i)
			}
		}
		mu.Lock()
		judged[q]++
		mu.Unlock()
		<-release
		return llmtest.Reply{Text: []string{`{"reasoning":"Direct.","score":"pass"}`}, Usage: &llmtest.Usage{Prompt: 100, Completion: 10}}
	}
	calls := func() (map[string]int, int) {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range judged {
			out[k] = v
		}
		return out, agentCalls
	}

	const lease = 2 * time.Second
	env := serveEnv(t.TempDir())
	for k, v := range map[string]string{"DATABASE_URL": pg, "MODELS": "real", "LEASE_TIMEOUT": lease.String(), "HEARTBEAT_INTERVAL": "500ms",
		"LOG_LEVEL": "info", "RATE_LIMIT": "0"} {
		env[k] = v
	}
	// A first node sets the workspace up, then stops: the process below is the only judge.
	n0 := start(t, env, "serve")
	c0 := n0.C
	if _, err := c0.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "fake", Type: "api_key", Provider: "openai",
		Value: "sk-proj-onlineTEST0000000000000000000000", Metadata: map[string]any{"base_url": fake.URL + "/v1"}}); err != nil {
		t.Fatal(err)
	}
	agent := mustAgent(t, c0, "simple", client.AgentConfig{Model: "gpt-4o-mini"})
	ev, err := c0.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "helpful", Type: "llm_judge",
		Config: map[string]any{"model": "gpt-4o-mini", "prompt": "Q: {{input.message}} A: {{output}}"}})
	if err != nil {
		t.Fatal(err)
	}
	rule, err := c0.EvaluationRuleCreate(ctx, client.EvaluationRuleCreateRequest{EvaluatorID: ev.ID, AgentID: agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	n0.stop(t)

	n1 := startProcess(t, buildBinary(t), env)
	c1 := client.New(n1.URL, client.WithAPIKey(n0.Key))
	var runs []string
	for i := range 3 {
		x, err := c1.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": fmt.Sprintf("question-%d", i)}})
		if err != nil || x.Status != "completed" {
			t.Fatalf("execute: %+v %v", x, err)
		}
		runs = append(runs, x.ID)
	}
	// The runs answered; their judgments are held at the judge model. Kill the node.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if j, _ := calls(); len(j) == 3 {
			break
		}
		if time.Now().After(deadline) {
			j, _ := calls()
			t.Fatalf("judge calls before the kill: %v\n%s", j, n1.Logs())
		}
	}
	if err := n1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-n1.exited
	open()

	n2 := start(t, env, "serve")
	for deadline := time.Now().Add(lease + 30*time.Second); ; time.Sleep(50 * time.Millisecond) {
		r, err := n2.C.EvaluationRuleGet(ctx, rule.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Judgments.Completed == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("judgments after the kill: %+v\n%s", r.Judgments, n2.Logs())
		}
	}
	scores, err := n2.C.ScoreList(ctx, client.ListScoresParams{RuleID: rule.ID})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, sc := range scores.Data {
		per[*sc.ExecutionID]++
		if sc.Source != "eval" || sc.Comment != "Direct." {
			t.Errorf("score: %+v", sc)
		}
	}
	for _, id := range runs {
		if per[id] != 1 {
			t.Errorf("run %s has %d scores, want 1 (all: %v)", id, per[id], per)
		}
	}
	j, agentN := calls()
	for q, n := range j {
		if n != 2 {
			t.Errorf("%s judged %d times, want 2 (once on the killed node, once after): %v", q, n, j)
		}
	}
	if agentN != 3 {
		t.Errorf("the agent's model was called %d times for 3 runs", agentN)
	}
}
