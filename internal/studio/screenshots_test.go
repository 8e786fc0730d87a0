package studio_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentplane/agentplane/client"
)

// TestStudioScreenshots writes a 1400×900 screenshot of each Studio page, drawn against the
// seeded emulator with a few runs and an ingested trace, into the folder named by
// AGENTPLANE_STUDIO_SCREENSHOTS (the README shows docs/studio/):
//
//	AGENTPLANE_STUDIO_SCREENSHOTS=$PWD/docs/studio go test -run TestStudioScreenshots ./internal/studio/
func TestStudioScreenshots(t *testing.T) {
	dir := os.Getenv("AGENTPLANE_STUDIO_SCREENSHOTS")
	if dir == "" {
		t.Skip("set AGENTPLANE_STUDIO_SCREENSHOTS to a folder to write Studio's screenshots there")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := startEmulator(t)
	c := client.New(base)
	ctx := context.Background()
	agent, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support assistant", Type: "simple", Description: "Answers customers' questions.",
		Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You are the support assistant of Acme. Answer {{customer}} briefly and kindly."}})
	if err != nil {
		t.Fatal(err)
	}
	var run *client.Execution
	for i, eu := range []string{"acme-42", "acme-42", "globex-7", ""} {
		if run, err = c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"customer": "Ada", "message": []string{
			"How do I reset my password?", "Can I change my plan mid-month?", "Where is my invoice?", "Do you ship to Norway?"}[i]}, EndUserID: eu}); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := c.IngestSpans(ctx, checkoutSpans(time.Now().UTC().Add(-time.Minute))); err != nil || res.Rejected != 0 {
		t.Fatalf("ingest: %+v %v", res, err)
	}

	verdict, err := c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "verdict", DataType: client.ScoreCategorical, Description: "Is the answer right?",
		Categories: []client.ScoreCategory{{Label: "correct", Value: client.Ptr(float64(1))}, {Label: "partly", Value: client.Ptr(float64(0.5))}, {Label: "wrong", Value: client.Ptr(float64(0))}}})
	if err != nil {
		t.Fatal(err)
	}
	queue, err := c.AnnotationQueueCreate(ctx, client.AnnotationQueueCreateRequest{Name: "Support answers", ScoreConfigIds: []string{verdict.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AnnotationItemsAdd(ctx, queue.ID, []string{run.ID}); err != nil {
		t.Fatal(err)
	}

	// Evaluation: a dataset with an item by hand and one from a run, an evaluator, a rule that
	// judged the runs that ended after it.
	dset, err := c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "support-regressions", Description: "Questions support got wrong once."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DatasetItemCreate(ctx, dset.ID, client.DatasetItemRequest{Input: map[string]any{"customer": "Ada", "message": "Can I pay by invoice?"},
		ExpectedOutput: []byte(`"Yes, on the Business plan."`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DatasetItemCreate(ctx, dset.ID, client.DatasetItemRequest{SourceExecutionID: run.ID}); err != nil {
		t.Fatal(err)
	}
	ev, err := c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "helpful", Type: "llm_judge", Description: "A model judges whether the answer helps.",
		Config: map[string]any{"model": "gpt-4o-mini", "prompt": "Question: {{input.message}}\nAnswer: {{output}}\nIs the answer helpful?"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EvaluationRuleCreate(ctx, client.EvaluationRuleCreateRequest{EvaluatorID: ev.ID, AgentID: agent.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EvaluationRuleCreate(ctx, client.EvaluationRuleCreateRequest{EvaluatorID: ev.ID, Enabled: ptrTo(false),
		Filter: client.RuleFilterRequest{Status: []string{"completed", "failed"}, Metadata: map[string]any{"tier": "gold"}}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"Is there a student discount?", "How do I export my data?", "Can I add a second admin?", "Why was I charged twice?"} {
		if _, err := c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"customer": "Ada", "message": m}}); err != nil {
			t.Fatal(err)
		}
	}

	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		rules, err := c.EvaluationRuleList(ctx, client.ListEvaluationRulesParams{AgentID: agent.ID})
		if err != nil {
			t.Fatal(err)
		}
		if rules.Data[0].Judgments.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("judgments still pending: %+v", rules.Data[0].Judgments)
		}
	}

	b := newBrowser(t, base)
	b.run(chromedp.EmulateViewport(1400, 900), chromedp.Navigate(base+"/studio"), chromedp.WaitVisible(chromedp.CSS("#new-agent")))
	shoot := func(name, page, ready string) {
		t.Helper()
		b.run(hash(page), until(drawn(`location.hash`)), until(ready))
		js[bool](b, `(() => { window.scrollTo(0, 0); return true; })()`)
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shoot("agents", "#/agents", `!!document.querySelector('tbody tr')`)
	b.run(hash("#/agents/"+agent.ID), until(drawn(`location.hash`)))
	b.setInput("#prompt-sample", `{"customer": "Ada", "message": "How do I reset my password?"}`)
	shoot("agent-editor", "#/agents/"+agent.ID, `document.querySelector('#prompt-preview')?.textContent.includes('Answer Ada')`)
	shoot("executions", "#/executions", `document.querySelectorAll('#executions tbody tr').length >= 4`)
	shoot("execution", "#/executions/"+run.ID, `!!document.querySelector('#waterfall')`)
	shoot("traces", "#/traces", `!!document.querySelector('#traces tbody tr')`)
	b.run(hash("#/traces/checkout-1"), until(drawn(`location.hash`)), chromedp.Click(chromedp.CSS(`tr[data-span="llm"]`)))
	shoot("trace", "#/traces/checkout-1", `document.querySelector('#span-title')?.textContent === 'chat gpt-4o-mini'`)
	shoot("usage", "#/usage", `!!document.querySelector('#usage-by-model tbody tr')`)
	shoot("approvals", "#/approvals", `true`)
	shoot("review", "#/review/"+queue.ID, `!!document.querySelector('#review-complete')`)
	shoot("dataset", "#/datasets/"+dset.ID, `document.querySelectorAll('#items tbody tr').length === 2`)
	b.run(hash("#/evaluators/"+ev.ID), until(drawn(`location.hash`)), chromedp.Click(chromedp.CSS("#ev-test")), until(`!!document.querySelector('#test-value')`))
	shoot("evaluator", "#/evaluators/"+ev.ID, `true`)
	shoot("rules", "#/rules", `!!document.querySelector('#rules tbody tr')`)
	shoot("chat", "#/chat", `true`)
	shoot("prompts", "#/prompts", `true`)
	shoot("credentials", "#/credentials", `true`)
	shoot("mcp-tools", "#/mcp-tools", `true`)
	b.noConsoleErrors()
}

func ptrTo[T any](v T) *T { return &v }
