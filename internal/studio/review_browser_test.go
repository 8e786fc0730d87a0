package studio_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentplane/agentplane/client"
)

// TestStudioReview: a reviewer opens an annotation queue, reads each run's input and output,
// scores it under the queue's configs and completes it; the scores land as annotation scores
// with the values given, and the queue ends empty.
func TestStudioReview(t *testing.T) {
	t.Parallel()
	base := startEmulator(t)
	ctx := context.Background()
	c := client.New(base)
	agent, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Reviewed", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for i := range 2 {
		x, err := c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": fmt.Sprintf("question number %d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, x.ID)
	}
	one, five := 1.0, 5.0
	rating, err := c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "rating", DataType: client.ScoreNumeric, Min: &one, Max: &five})
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "verdict", DataType: client.ScoreCategorical,
		Categories: []client.ScoreCategory{{Label: "good", Value: client.Ptr(float64(1))}, {Label: "bad", Value: client.Ptr(float64(0))}}})
	if err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, base)
	// The queue is created from the form, with both configs ticked.
	b.run(chromedp.Navigate(base+"/studio#/review"), until(`document.querySelector('#main').dataset.route === '#/review'`),
		chromedp.SendKeys(chromedp.CSS("#queue-name"), "weekly"))
	js[bool](b, `(() => { document.querySelectorAll('.queue-config').forEach((b) => { b.checked = true; }); return true; })()`)
	b.run(chromedp.Click(chromedp.CSS("#queue-create")), until(`location.hash.startsWith('#/review/') && !!document.querySelector('#review-done')`))
	queues, err := c.AnnotationQueueList(ctx, client.ListAnnotationQueuesParams{})
	if err != nil || len(queues.Data) != 1 || len(queues.Data[0].ScoreConfigIds) != 2 {
		t.Fatalf("queue from the form: %+v %v", queues, err)
	}
	q := queues.Data[0]
	if _, err := c.AnnotationItemsAdd(ctx, q.ID, runs); err != nil {
		t.Fatal(err)
	}

	// The list shows the two pending items; the review takes them oldest first.
	b.run(hash("#/review"), until(`document.querySelector('#queues .pending')?.textContent === '2'`))
	b.shot("review-queues")
	b.run(chromedp.Click(chromedp.CSS("#queues a")), until(`!!document.querySelector('#review-complete')`))
	b.shot("review-item")
	for i, want := range []struct {
		rating, verdict string
	}{{"4", "good"}, {"2", "bad"}} {
		if got := b.text("#review-execution"); got != runs[i] {
			t.Fatalf("item %d reviews %s, want %s", i, got, runs[i])
		}
		if in := b.text("#review-input"); !strings.Contains(in, fmt.Sprintf("question number %d", i)) {
			t.Fatalf("item %d input %q", i, in)
		}
		b.run(chromedp.SetValue(chromedp.CSS("#score-"+rating.ID), want.rating),
			chromedp.SetValue(chromedp.CSS("#score-"+verdict.ID), want.verdict),
			chromedp.Click(chromedp.CSS("#review-complete")))
		if i == 0 {
			b.run(until(fmt.Sprintf(`document.querySelector('#review-execution')?.textContent === %q`, runs[1])))
		}
	}
	b.run(until(`!!document.querySelector('#review-done')`))
	if got := b.text("#review-counts"); got != "0 pending · 2 completed" {
		t.Errorf("counts at the end: %q", got)
	}
	scores, err := c.ScoreList(ctx, client.ListScoresParams{Source: client.ListScoresParamsSourceAnnotation})
	if err != nil || len(scores.Data) != 4 {
		t.Fatalf("annotation scores: %+v %v", scores, err)
	}
	got := map[string]string{}
	for _, s := range scores.Data {
		v := ""
		if s.StringValue != nil {
			v = *s.StringValue
		} else if s.Value != nil {
			v = fmt.Sprint(*s.Value)
		}
		got[*s.ExecutionID+" "+s.Name] = v
	}
	want := map[string]string{runs[0] + " rating": "4", runs[0] + " verdict": "good", runs[1] + " rating": "2", runs[1] + " verdict": "bad"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("score %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	b.noConsoleErrors()
}
