package api

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
)

// scrapeMetrics returns the text of GET /metrics.
func (e *testEnv) scrapeMetrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(e.ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// metricLine is the line of a series in a scrape ("" when absent).
func metricLine(text, series string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, series+" ") {
			return l
		}
	}
	return ""
}

// TestMetricsAfterRuns: /metrics holds the run, model call, token, cost, queue and stream
// series once runs happened, on SQLite and PostgreSQL, with no id in any label.
func TestMetricsAfterRuns(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { metricsAfterRuns(t, newServerEnv(t)) })
	t.Run("postgres", func(t *testing.T) { metricsAfterRuns(t, newTestEnv(t, onStore(openTestPostgres(t)), asServer())) })
}

func metricsAfterRuns(t *testing.T, e *testEnv) {
	ctx := context.Background()
	agent, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	if err != nil || x.Status != domain.StatusCompleted {
		t.Fatalf("execute: %+v %v", x, err)
	}
	appr, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Gate", Type: "approval", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Approval: client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "c", When: "before_output"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := e.c.Execute(ctx, appr.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	if err != nil || waiting.Status != domain.StatusAwaitingApproval {
		t.Fatalf("execute: %+v %v", waiting, err)
	}
	// A stream open on the waiting run counts until it is closed.
	sctx, closeStream := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(sctx, "GET", e.ts.URL+"/api/v1/executions/"+waiting.ID+"/stream", nil)
	req.Header.Set("X-API-Key", e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil { // the first heartbeat: the stream is open
		t.Fatal(err)
	}
	out := e.scrapeMetrics(t)
	if l := metricLine(out, "agentplane_open_streams"); l != "agentplane_open_streams 1" {
		t.Fatalf("open stream: %q", l)
	}
	closeStream()
	resp.Body.Close()
	if _, err := e.c.ExecutionDeny(ctx, waiting.ID, "no"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		out = e.scrapeMetrics(t)
		if metricLine(out, "agentplane_open_streams") == "agentplane_open_streams 0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed stream still counts: %q", metricLine(out, "agentplane_open_streams"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, want := range []string{
		`agentplane_runs_total{agent_type="simple",provider="simulated",status="completed"} 1`,
		`agentplane_runs_total{agent_type="approval",provider="simulated",status="rejected"} 1`,
		`agentplane_run_duration_seconds_count{agent_type="simple",provider="simulated"} 1`,
		`agentplane_model_call_duration_seconds_count{provider="simulated"} 2`,
		`agentplane_queue_depth 0`,
		`agentplane_ingest_spans_total{format="otlp",result="rejected"} 0`,
	} {
		if !strings.Contains(out, "\n"+want+"\n") {
			t.Errorf("no line %q", want)
		}
	}
	for _, series := range []string{
		`agentplane_model_calls_total{provider="simulated",status="ok"}`,
		`agentplane_model_tokens_total{provider="simulated",type="prompt"}`,
		`agentplane_model_tokens_total{provider="simulated",type="completion"}`,
		`agentplane_model_cost_usd_total{provider="simulated"}`,
		`agentplane_http_requests_total{method="POST",route="POST /api/v1/agents/{id}/execute",status="200"}`,
	} {
		if l := metricLine(out, series); l == "" || strings.HasSuffix(l, " 0") {
			t.Errorf("no count for %s", series)
		}
	}
	for _, id := range []string{x.ID, agent.ID, waiting.ID, e.ws} {
		if strings.Contains(out, id) {
			t.Errorf("an id (%s) is in a label", id)
		}
	}
}
