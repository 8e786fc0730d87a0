package studio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentplane/agentplane/client"
)

// TestStudioExperiments: the experiments page lists two experiments; one shows its progress,
// its summary and a results row per item with its scores; the form compares the two side by
// side, with each score's difference to the baseline.
func TestStudioExperiments(t *testing.T) {
	t.Parallel()
	base := startEmulator(t)
	ctx := context.Background()
	c := client.New(base)
	agent, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Evaluated", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "qa"})
	if err != nil {
		t.Fatal(err)
	}
	var items []client.DatasetItemRequest
	for i := range 3 {
		items = append(items, client.DatasetItemRequest{Input: map[string]any{"message": fmt.Sprintf("question number %d", i)}, ExpectedOutput: json.RawMessage(`"an answer"`)})
	}
	if _, err := c.DatasetItemsAdd(ctx, d.ID, items); err != nil {
		t.Fatal(err)
	}
	ev, err := c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "close", Type: "similarity"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		x, err := c.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: d.ID, AgentID: agent.ID, EvaluatorIds: []string{ev.ID}})
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); !x.Finished(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("experiment %s still %s", x.ID, x.Status)
			}
			if x, err = c.ExperimentGet(ctx, x.ID); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, x.ID)
	}

	b := newBrowser(t, base)
	b.run(chromedp.Navigate(base+"/studio#/experiments"), until(`document.querySelectorAll('#experiments tbody tr').length === 2`))
	b.shot("experiments")
	b.run(hash("#/experiments/"+ids[0]), until(`document.querySelectorAll('#experiment-results tbody tr').length === 3`))
	b.shot("experiment")
	if got := b.text("#experiment-status"); got != "completed" {
		t.Errorf("status %q", got)
	}
	if got := js[float64](b, `document.querySelector('#experiment-progress').value`); got != 3 {
		t.Errorf("progress %v", got)
	}
	if got := js[int](b, `document.querySelectorAll('#experiment-results td[data-name="close"]').length`); got != 3 {
		t.Errorf("%d score cells", got)
	}
	if got := b.text(`#experiment-summary tr[data-score="close"] .mean`); got == "" || got == "—" {
		t.Errorf("mean %q", got)
	}

	// Compare from the list's form: the same runs scored alike, so every difference is zero.
	b.run(hash("#/experiments"), until(`!!document.querySelector('#compare-form')`),
		chromedp.SetValue(chromedp.CSS("#cmp-a"), ids[0]), chromedp.SetValue(chromedp.CSS("#cmp-b"), ids[1]),
		chromedp.Click(chromedp.CSS("#compare")), until(`!!document.querySelector('#compare-scores tr[data-score="close"]')`))
	b.shot("experiments-compare")
	if got := b.text(`#compare-scores tr[data-score="close"] td[data-col="1"]`); !strings.Contains(got, "(+0") {
		t.Errorf("difference cell %q", got)
	}
	if got := js[int](b, `document.querySelectorAll('#compare-items tbody tr').length`); got != 3 {
		t.Errorf("%d compared items", got)
	}
	b.noConsoleErrors()
}
