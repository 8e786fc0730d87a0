package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// TestScoresAndMetricsEndToEnd: on every way agentplane runs, a run is scored through the SDK
// (the author is the key on serve, none in the emulator), summed up, and counted at /metrics
// (the engine and the API of the binary share their instruments).
func TestScoresAndMetricsEndToEnd(t *testing.T) {
	t.Parallel()
	for name, p := range targets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := p.C
			a := mustAgent(t, c, "simple", client.AgentConfig{})
			x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := c.ScoreConfigCreate(ctx, client.ScoreConfigCreateRequest{Name: "verdict", DataType: client.ScoreCategorical,
				Categories: []client.ScoreCategory{{Label: "correct", Value: client.Ptr(float64(1))}, {Label: "wrong", Value: client.Ptr(float64(0))}}})
			if err != nil {
				t.Fatal(err)
			}
			sc, err := c.ScoreCreate(ctx, client.ScoreCreateRequest{TraceID: x.TraceID, ConfigID: cfg.ID, StringValue: "correct", Source: client.ScoreCreateRequestSourceAnnotation})
			if err != nil || *sc.Value != 1 || *sc.ExecutionID != x.ID {
				t.Fatalf("score: %+v %v", sc, err)
			}
			if (sc.Author != nil) != (name != "emulator") {
				t.Fatalf("author on %s: %+v", name, sc.Author)
			}
			_, err = c.ScoreCreate(ctx, client.ScoreCreateRequest{ExecutionID: x.ID, ConfigID: cfg.ID, StringValue: "maybe"})
			if e := apiErr(t, err, http.StatusUnprocessableEntity); !strings.Contains(e.Message, "string_value") {
				t.Fatalf("invalid label: %v", e)
			}
			sum, err := c.ScoreSummaries(ctx, client.SummarizeScoresParams{ExecutionID: x.ID})
			if err != nil || len(sum.Data) != 1 || sum.Data[0].Categories[0] != (client.ScoreLabelCount{Label: "correct", Count: 1}) {
				t.Fatalf("summary: %+v %v", sum, err)
			}
			resp, err := http.Get(p.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, want := range []string{`agentplane_runs_total{agent_type="simple",provider="simulated",status="completed"} 1`, "agentplane_queue_depth 0"} {
				if !strings.Contains(string(body), "\n"+want+"\n") {
					t.Errorf("/metrics lacks %q", want)
				}
			}
		})
	}
}
