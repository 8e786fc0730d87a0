package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// TestSDKEvaluation drives datasets (and items), evaluators (and their test), annotation
// queues (next, complete, score agreement) and the OpenAI-compatible endpoint through the Go
// SDK against serve (SQLite, simulated models).
func TestSDKEvaluation(t *testing.T) {
	t.Parallel()
	p := start(t, serveEnv(dataDir(t)), "serve")
	c, ctx := p.C, context.Background()
	a := mustAgent(t, c, "simple", client.AgentConfig{})

	t.Run("Datasets", func(t *testing.T) {
		d, err := c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "questions"})
		if err != nil {
			t.Fatal(err)
		}
		batch, err := c.DatasetItemsAdd(ctx, d.ID, []client.DatasetItemRequest{
			{Input: map[string]any{"q": "a"}, ExpectedOutput: json.RawMessage(`"A"`)},
			{Input: map[string]any{"q": "b"}},
		})
		if err != nil || batch.Count != 2 {
			t.Fatalf("add items: %+v %v", batch, err)
		}
		l, err := c.DatasetItemList(ctx, d.ID, client.ListDatasetItemsParams{Limit: 1})
		if err != nil || len(l.Data) != 1 || l.Pagination.Total != 2 || l.Pagination.NextCursor == nil {
			t.Fatalf("list items: %+v %v", l, err)
		}
	})

	t.Run("Evaluators", func(t *testing.T) {
		ev, err := c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "has-hi", Type: client.EvaluatorCreateRequestTypeContains,
			Config: map[string]any{"value": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		for output, want := range map[string]float64{`"oh hi there"`: 1, `"bye"`: 0} {
			res, err := c.EvaluatorTest(ctx, ev.ID, client.EvaluatorTestRequest{Output: json.RawMessage(output)})
			if err != nil || res.Value == nil || *res.Value != want {
				t.Fatalf("test %s: %+v %v", output, res, err)
			}
		}
	})

	t.Run("AnnotationQueues", func(t *testing.T) {
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "good", DataType: client.ScoreConfigCreateRequestDataTypeBoolean})
		if err != nil {
			t.Fatal(err)
		}
		q, err := c.AnnotationQueueCreate(ctx, client.AnnotationQueueCreateRequest{Name: "review", ScoreConfigIds: []string{cfg.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.AnnotationItemsAdd(ctx, q.ID, []string{x.ID}); err != nil {
			t.Fatal(err)
		}
		claim, err := c.AnnotationNext(ctx, q.ID)
		if err != nil || claim.Item == nil || claim.Item.ExecutionID != x.ID {
			t.Fatalf("next: %+v %v", claim, err)
		}
		done, err := c.AnnotationComplete(ctx, q.ID, claim.Item.ID, []client.AnnotationScore{{ConfigID: cfg.ID, Value: client.Ptr(1.0)}})
		if err != nil || len(done.Scores) != 1 {
			t.Fatalf("complete: %+v %v", done, err)
		}
		if _, err := c.ScoreCreate(ctx, client.ScoreCreateRequest{ExecutionID: x.ID, Name: "judge", DataType: client.ScoreCreateRequestDataTypeBoolean, Value: client.Ptr(1.0)}); err != nil {
			t.Fatal(err)
		}
		agree, err := c.ScoreAgreement(ctx, client.ScoreAgreementParams{Judge: "judge", Human: "good"})
		if err != nil || agree.Count != 1 || agree.ExactAgreement == nil || *agree.ExactAgreement != 1 {
			t.Fatalf("agreement: %+v %v", agree, err)
		}
	})

	t.Run("OpenAICompatible", func(t *testing.T) {
		models, err := c.OpenAIModels(ctx)
		if err != nil || len(models.Data) == 0 {
			t.Fatalf("models: %+v %v", models, err)
		}
		out, err := c.OpenAIChatCompletions(ctx, client.OpenAIChatRequest{Model: a.ID,
			Messages: []client.OpenAIMessage{{Role: "user", Content: json.RawMessage(`"Hello"`)}}})
		if err != nil || len(out.Choices) != 1 || out.Choices[0].Message.Content == "" || out.ExecutionID == "" {
			t.Fatalf("chat completion: %+v %v", out, err)
		}
		var ae *client.Error
		_, err = c.OpenAIChatCompletions(ctx, client.OpenAIChatRequest{Model: "no-such-agent",
			Messages: []client.OpenAIMessage{{Role: "user", Content: json.RawMessage(`"Hello"`)}}})
		if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Code == "" || ae.Code[:5] == "http_" {
			t.Fatalf("unknown model: %v", err)
		}
	})
}
