package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/runtime"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func wantLines(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(text, "\n"+l+"\n") {
			t.Errorf("no line %q in the scrape", l)
		}
	}
}

func TestInstruments(t *testing.T) {
	m := New()
	out := scrape(t, m)
	// Ingest series exist before the first span; the queue gauge only once it can be counted.
	wantLines(t, out, `agentplane_ingest_spans_total{format="otlp",result="accepted"} 0`, `agentplane_open_streams 0`)
	if strings.Contains(out, "agentplane_queue_depth") {
		t.Error("queue depth before SetQueue")
	}
	m.RunEnded(runtime.RunEnd{Status: "completed", AgentType: "chain", Provider: "openai", Duration: 1500 * time.Millisecond})
	m.RunEnded(runtime.RunEnd{Status: "failed", AgentType: "simple", Duration: time.Second})
	m.ModelCalled(runtime.ModelCall{Provider: "openai", Duration: 300 * time.Millisecond, PromptTokens: 120, CompletionTokens: 30, Cost: 0.0042})
	m.ModelCalled(runtime.ModelCall{Provider: "openai", Duration: time.Second, Failed: true})
	m.IngestSpans(IngestOTLP, 998, 2)
	closed := m.StreamOpened()
	m.StreamOpened()
	closed()
	m.HTTPRequest("GET", "GET /api/v1/agents/{id}", 404, time.Millisecond)
	queued := 7
	m.SetQueue(func(context.Context) (int, error) { return queued, nil })
	out = scrape(t, m)
	wantLines(t, out,
		`agentplane_runs_total{agent_type="chain",provider="openai",status="completed"} 1`,
		`agentplane_runs_total{agent_type="simple",provider="unknown",status="failed"} 1`,
		`agentplane_run_duration_seconds_bucket{agent_type="chain",provider="openai",le="2.5"} 1`,
		`agentplane_run_duration_seconds_bucket{agent_type="chain",provider="openai",le="1"} 0`,
		`agentplane_model_calls_total{provider="openai",status="ok"} 1`,
		`agentplane_model_calls_total{provider="openai",status="error"} 1`,
		`agentplane_model_call_duration_seconds_count{provider="openai"} 2`,
		`agentplane_model_tokens_total{provider="openai",type="prompt"} 120`,
		`agentplane_model_tokens_total{provider="openai",type="completion"} 30`,
		`agentplane_model_cost_usd_total{provider="openai"} 0.0042`,
		`agentplane_ingest_spans_total{format="otlp",result="accepted"} 998`,
		`agentplane_ingest_spans_total{format="otlp",result="rejected"} 2`,
		`agentplane_ingest_spans_total{format="sdk",result="accepted"} 0`,
		`agentplane_open_streams 1`,
		`agentplane_http_requests_total{method="GET",route="GET /api/v1/agents/{id}",status="404"} 1`,
		`agentplane_queue_depth 7`,
	)
	// A failing count leaves the gauge out of that scrape, and only it.
	m.SetQueue(func(context.Context) (int, error) { return 0, errors.New("database down") })
	out = scrape(t, m)
	if strings.Contains(out, "agentplane_queue_depth") || !strings.Contains(out, "agentplane_runs_total") {
		t.Errorf("scrape with the queue failing:\n%s", out)
	}
}
