package studio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentplane/agentplane/client"
)

// evaluationFixture is an agent of the emulator with two finished runs.
func evaluationFixture(t *testing.T, c *client.Client) (agent *client.Agent, runs []*client.Execution) {
	t.Helper()
	ctx := context.Background()
	agent, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		x, err := c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": fmt.Sprintf("question %d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, x)
	}
	return agent, runs
}

// TestStudioDatasets: a dataset is created from the form, gets an item typed by hand and one
// made from a past run (its input, and its output as the expected output), and loses one.
func TestStudioDatasets(t *testing.T) {
	t.Parallel()
	base := startEmulator(t)
	ctx := context.Background()
	c := client.New(base)
	_, runs := evaluationFixture(t, c)

	b := newBrowser(t, base)
	b.run(chromedp.Navigate(base+"/studio#/datasets"), until(`document.querySelector('#main').dataset.route === '#/datasets'`),
		chromedp.SendKeys(chromedp.CSS("#dataset-name"), "support-cases"),
		chromedp.Click(chromedp.CSS("#dataset-create")), until(`!!document.querySelector('#items-empty')`))
	b.shot("dataset-empty")
	list, err := c.DatasetList(ctx, client.ListDatasetsParams{})
	if err != nil || len(list.Data) != 1 || list.Data[0].Name != "support-cases" {
		t.Fatalf("dataset from the form: %+v %v", list, err)
	}
	ds := list.Data[0]

	b.setInput("#item-input", `{"message": "Where is my order?"}`)
	b.setInput("#item-expected", `"It ships today."`)
	b.run(chromedp.Click(chromedp.CSS("#item-add")), until(`document.querySelectorAll('#items tbody tr').length === 1`))
	b.run(chromedp.SetValue(chromedp.CSS("#item-execution"), runs[1].ID), chromedp.Click(chromedp.CSS("#item-from-run")),
		until(`document.querySelectorAll('#items tbody tr').length === 2`))
	b.shot("dataset-items")
	if got := b.text("#dataset-summary"); got != "2 items · version 2" {
		t.Errorf("summary %q", got)
	}
	items, err := c.DatasetItemList(ctx, ds.ID, client.ListDatasetItemsParams{})
	if err != nil || len(items.Data) != 2 {
		t.Fatalf("items: %+v %v", items, err)
	}
	byRun, byHand := items.Data[0], items.Data[1] // newest first
	if byRun.SourceExecutionID == nil || *byRun.SourceExecutionID != runs[1].ID || byRun.Input["message"] != "question 1" ||
		string(byRun.ExpectedOutput) != string(runs[1].Output) {
		t.Errorf("item from the run: %+v (run output %s)", byRun, runs[1].Output)
	}
	if byHand.Input["message"] != "Where is my order?" || string(byHand.ExpectedOutput) != `"It ships today."` || byHand.SourceExecutionID != nil {
		t.Errorf("item by hand: %+v", byHand)
	}

	// Delete asks twice.
	sel := fmt.Sprintf(`tr[data-item="%s"] .item-delete`, byHand.ID)
	b.run(chromedp.Click(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)),
		until(`document.querySelectorAll('#items tbody tr').length === 1`))
	if d, err := c.DatasetGet(ctx, ds.ID); err != nil || d.ItemCount != 1 {
		t.Fatalf("after the delete: %+v %v", d, err)
	}
	b.noConsoleErrors()
}

// TestStudioEvaluators: an evaluator is created from the form, tested on an output (nothing
// stored), edited, and tested again with the new config.
func TestStudioEvaluators(t *testing.T) {
	t.Parallel()
	base := startEmulator(t)
	ctx := context.Background()
	c := client.New(base)

	b := newBrowser(t, base)
	b.run(chromedp.Navigate(base+"/studio#/evaluators"), until(`document.querySelector('#main').dataset.route === '#/evaluators'`),
		chromedp.SendKeys(chromedp.CSS("#ev-name"), "mentions-shipping"),
		chromedp.SetValue(chromedp.CSS("#ev-type"), "contains"))
	b.setInput("#ev-config", `{"value": "ships"}`)
	b.run(chromedp.Click(chromedp.CSS("#ev-create")), until(`location.hash.startsWith('#/evaluators/') && !!document.querySelector('#ev-test')`))
	list, err := c.EvaluatorList(ctx, client.ListEvaluatorsParams{})
	if err != nil || len(list.Data) != 1 || list.Data[0].Type != "contains" || list.Data[0].Config["value"] != "ships" {
		t.Fatalf("evaluator from the form: %+v %v", list, err)
	}
	ev := list.Data[0]

	b.run(chromedp.Click(chromedp.CSS("#ev-test")), until(`document.querySelector('#test-value')?.textContent === 'true'`))
	b.shot("evaluator-test")
	if got := b.text("#test-comment"); got == "" || got == "—" {
		t.Errorf("test comment %q", got)
	}

	b.setInput("#ev-config", `{"value": "refund"}`)
	b.run(chromedp.Click(chromedp.CSS("#ev-save")), until(`document.querySelector('#ev-config')?.value.includes('refund') && !document.querySelector('#test-value')`))
	got, err := c.EvaluatorGet(ctx, ev.ID)
	if err != nil || got.Config["value"] != "refund" {
		t.Fatalf("edited evaluator: %+v %v", got, err)
	}
	b.run(chromedp.Click(chromedp.CSS("#ev-test")), until(`document.querySelector('#test-value')?.textContent === 'false'`))
	if scores, err := c.ScoreList(ctx, client.ListScoresParams{}); err != nil || len(scores.Data) != 0 {
		t.Fatalf("a test stored scores: %+v %v", scores, err)
	}

	// A config the type refuses is reported, and nothing changes.
	b.setInput("#ev-config", `{"colour": "red"}`)
	b.run(chromedp.Click(chromedp.CSS("#ev-save")), until(`document.querySelector('#status')?.textContent.includes('config.colour')`))
	b.expectError("422")
	if got, _ := c.EvaluatorGet(ctx, ev.ID); got.Config["value"] != "refund" {
		t.Fatalf("a refused edit changed the evaluator: %+v", got)
	}
	b.noConsoleErrors()
}

// TestStudioRules: a rule is created from the form for one agent; the emulator's judge scores
// the runs that end after it (the list shows them judged); it is disabled from the list and
// edited on its page.
func TestStudioRules(t *testing.T) {
	t.Parallel()
	base := startEmulator(t)
	ctx := context.Background()
	c := client.New(base)
	agent, _ := evaluationFixture(t, c)
	ev, err := c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "answered", Type: "regex", Config: map[string]any{"pattern": "\\S"}})
	if err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, base)
	b.run(chromedp.Navigate(base+"/studio#/rules"), until(`document.querySelector('#main').dataset.route === '#/rules'`),
		chromedp.SetValue(chromedp.CSS("#rule-evaluator"), ev.ID), chromedp.SetValue(chromedp.CSS("#rule-agent"), agent.ID))
	b.setInput("#rule-metadata", `{"tier": "gold"}`)
	b.run(chromedp.Click(chromedp.CSS("#rule-create")), until(`document.querySelectorAll('#rules tbody tr').length === 1`))
	rules, err := c.EvaluationRuleList(ctx, client.ListEvaluationRulesParams{})
	if err != nil || len(rules.Data) != 1 {
		t.Fatalf("rules: %+v %v", rules, err)
	}
	r := rules.Data[0]
	if r.EvaluatorID != ev.ID || r.AgentID == nil || *r.AgentID != agent.ID || r.Sampling != 1 || !r.Enabled ||
		r.Filter.Metadata["tier"] != "gold" || len(r.Filter.Status) != 1 || r.Filter.Status[0] != "completed" {
		t.Fatalf("rule from the form: %+v", r)
	}

	// Runs that end now are judged in the background: a gold one scored, a silver one not.
	for _, tier := range []string{"gold", "silver"} {
		if _, err := c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}, Metadata: map[string]any{"tier": tier}}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := c.EvaluationRuleGet(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Judgments.Completed == 1 && got.Judgments.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("judgments of the rule: %+v", got.Judgments)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.run(hash("#/rules?judged=1"), until(drawn(`'#/rules?judged=1'`)),
		until(fmt.Sprintf(`document.querySelector('tr[data-rule="%s"] .completed')?.textContent === '1'`, r.ID)))
	b.shot("rules")

	b.run(chromedp.Click(chromedp.CSS(".rule-toggle")), until(`document.querySelector('.rule-toggle')?.textContent === 'Enable'`))
	if got, err := c.EvaluationRuleGet(ctx, r.ID); err != nil || got.Enabled {
		t.Fatalf("disabled rule: %+v %v", got, err)
	}

	b.run(chromedp.Click(chromedp.CSS(`tr[data-rule] a`)), until(`!!document.querySelector('#rule-save')`))
	if got := b.text("#rule-counts"); got != "1 judged · 0 pending · 0 failed" {
		t.Errorf("rule counts %q", got)
	}
	b.setInput("#rule-sampling", "25")
	b.run(chromedp.SetValue(chromedp.CSS("#rule-agent"), ""), chromedp.Click(chromedp.CSS("#rule-save")),
		until(`document.querySelector('#rule-sampling')?.value === '25' && !!document.querySelector('#rule-scores')`))
	// The form's value is set before the save answers: wait for the PATCH to land.
	var got *client.EvaluationRule
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if got, err = c.EvaluationRuleGet(ctx, r.ID); err != nil || got.Sampling == 0.25 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || got.Sampling != 0.25 || got.AgentID != nil || got.Enabled {
		b, _ := json.Marshal(got)
		t.Fatalf("edited rule: %s %v", b, err)
	}
	b.noConsoleErrors()
}
