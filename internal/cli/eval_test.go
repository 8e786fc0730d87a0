package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// TestEvalRun runs experiments from the CLI against the emulator (its simulated model answers
// the agent and the judge): progress lines, the summary table, --min gates (exit 1 when one
// is not met), and a comparison.
func TestEvalRun(t *testing.T) {
	t.Parallel()
	tg := emulatorTarget(t)
	env := loggedIn(t, tg)
	ctx := context.Background()
	if _, err := tg.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	for _, in := range []client.EvaluatorCreateRequest{
		{Name: "close", Type: "similarity"},
		{Name: "judged", Type: "llm_judge", Config: map[string]any{"model": "gpt-4o-mini", "prompt": "Question: {{input.message}}\nAnswer: {{output}}"}},
	} {
		if _, err := tg.C.EvaluatorCreate(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	cases := filepath.Join(t.TempDir(), "support-qa.jsonl")
	os.WriteFile(cases, []byte("{\"input\":{\"message\":\"Where is my order?\"},\"expected_output\":\"It ships today\"}\n{\"input\":{\"message\":\"Refund?\"},\"expected_output\":\"Yes\"}\n{\"input\":{\"message\":\"Hi\"},\"expected_output\":\"Hello\"}\n"), 0o600)
	want(t, agentplane(t, env, "", "datasets", "push", cases), 0, "datasets push")
	run := []string{"eval", "run", "--dataset", "support-qa", "--agent", "Support", "--evaluator", "close", "--evaluator", "judged"}

	t.Run("passes its gates", func(t *testing.T) {
		r := want(t, agentplane(t, env, "", append(run, "--min", "close=0", "--min", "judged=0")...), 0, "eval run")
		if strings.Count(r.stderr, "completed close=") != 3 || !strings.Contains(r.stderr, "[3/3]") {
			t.Fatalf("progress lines: %s", r)
		}
		if !strings.Contains(r.stdout, "completed: 3 completed, 0 failed of 3") || !strings.Contains(r.stdout, "close") || !strings.Contains(r.stdout, "judged") ||
			!strings.Contains(r.stdout, "latency p50") {
			t.Fatalf("summary: %s", r)
		}
	})
	t.Run("fails a gate", func(t *testing.T) {
		r := want(t, agentplane(t, env, "", append(run, "--min", "close=1.5")...), 1, "eval run below a minimum")
		if !strings.Contains(r.stderr, "score close: mean") || !strings.Contains(r.stderr, "below the minimum 1.5") {
			t.Fatalf("gate: %s", r)
		}
		r = want(t, agentplane(t, env, "", append(run, "--min", "nothing=0.5", "-o", "json")...), 1, "eval run with a missing score")
		if !strings.Contains(r.stderr, "score nothing has no mean") || decodeJSON[client.Experiment](t, r.stdout).Status != "completed" {
			t.Fatalf("missing score: %s", r)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		want(t, agentplane(t, env, "", append(run, "--min", "close")...), 2, "a --min without a value")
		want(t, agentplane(t, env, "", "eval", "run", "--agent", "Support"), 2, "no --dataset")
		r := want(t, agentplane(t, env, "", "eval", "run", "--dataset", "support-qa", "--agent", "Support", "--evaluator", "nope"), 1, "an unknown evaluator")
		if !strings.Contains(r.stderr, `no evaluator has the id or name "nope"`) {
			t.Fatalf("unknown evaluator: %s", r)
		}
		want(t, agentplane(t, env, "", "eval", "run", "--dataset", "support-qa", "--agent", "Support", "--version", "9"), 1, "an unknown version")
	})
	t.Run("compare", func(t *testing.T) {
		l, err := tg.C.ExperimentList(ctx, client.ListExperimentsParams{Status: "completed"})
		if err != nil || len(l.Data) < 2 {
			t.Fatalf("experiments: %+v %v", l, err)
		}
		r := want(t, agentplane(t, env, "", "eval", "compare", l.Data[1].ID, l.Data[0].ID), 0, "eval compare")
		if !strings.Contains(r.stdout, "close") || !strings.Contains(r.stdout, "(+0.000)") {
			t.Fatalf("compare: %s", r)
		}
		want(t, agentplane(t, env, "", "eval", "compare", l.Data[0].ID), 2, "compare one")
	})
}
