// Package metrics holds the Prometheus instruments of one agentplane process (a server or
// the emulator), served at /metrics: HTTP requests, runs and model calls (reported by the
// engine through runtime.Metrics), open streams, span ingest and the queue. Labels have low
// cardinality by construction: route patterns, statuses, agent types, providers; never ids.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentplane/agentplane/internal/runtime"
)

// Metrics is the process's registry and its instruments. Make one per process with New and
// give it to the engine (runtime.Config.Metrics) and the API (api.Config.Metrics).
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	runs          *prometheus.CounterVec
	runDuration   *prometheus.HistogramVec
	modelCalls    *prometheus.CounterVec
	modelDuration *prometheus.HistogramVec
	tokens        *prometheus.CounterVec
	cost          *prometheus.CounterVec

	streams prometheus.Gauge
	ingest  *prometheus.CounterVec

	// queue counts the pending executions at each scrape; nil until SetQueue.
	queue atomic.Pointer[QueueFunc]
}

var _ runtime.Metrics = (*Metrics)(nil)

// QueueFunc counts the executions waiting in the queue.
type QueueFunc func(ctx context.Context) (int, error)

// Ingest formats (the format label of agentplane_ingest_spans_total).
const (
	IngestSDK  = "sdk"  // POST /traces/ingest
	IngestOTLP = "otlp" // POST /otlp/v1/traces
)

// New makes a registry with the Go and process collectors and every agentplane instrument.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentplane_http_requests_total", Help: "HTTP requests by method, route and status.",
		}, []string{"method", "route", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentplane_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentplane_runs_total", Help: "Executions that ended, by terminal status, agent type and model provider.",
		}, []string{"status", "agent_type", "provider"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentplane_run_duration_seconds", Help: "Time from an execution's creation to its end, by agent type and model provider.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900},
		}, []string{"agent_type", "provider"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentplane_model_calls_total", Help: "Model calls (retries included) by provider and outcome (ok, error).",
		}, []string{"provider", "status"}),
		modelDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentplane_model_call_duration_seconds", Help: "Model call latency, retries included, by provider.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120},
		}, []string{"provider"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentplane_model_tokens_total", Help: "Tokens of model calls by provider and type (prompt, completion).",
		}, []string{"provider", "type"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentplane_model_cost_usd_total", Help: "Cost of model calls in USD, from the model catalog's prices, by provider.",
		}, []string{"provider"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentplane_open_streams", Help: "Server-Sent Events streams open on this process (execution and chat streams).",
		}),
		ingest: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentplane_ingest_spans_total", Help: "Spans received by ingest, by format (sdk, otlp) and result (accepted, rejected).",
		}, []string{"format", "result"}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.runs, m.runDuration, m.modelCalls, m.modelDuration, m.tokens, m.cost,
		m.streams, m.ingest, queueCollector{m})
	// The ingest series exist from the start, so a rate over them is defined before the first span.
	for _, f := range []string{IngestSDK, IngestOTLP} {
		for _, r := range []string{"accepted", "rejected"} {
			m.ingest.WithLabelValues(f, r)
		}
	}
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

// HTTPRequest counts one answered request; route is the route's pattern, never its path.
func (m *Metrics) HTTPRequest(method, route string, status int, d time.Duration) {
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(d.Seconds())
}

// RunEnded counts an execution that ended and observes its duration.
func (m *Metrics) RunEnded(e runtime.RunEnd) {
	m.runs.WithLabelValues(e.Status, label(e.AgentType), label(e.Provider)).Inc()
	m.runDuration.WithLabelValues(label(e.AgentType), label(e.Provider)).Observe(e.Duration.Seconds())
}

// ModelCalled counts a model call, its tokens and cost, and observes its duration.
func (m *Metrics) ModelCalled(c runtime.ModelCall) {
	p := label(c.Provider)
	status := "ok"
	if c.Failed {
		status = "error"
	}
	m.modelCalls.WithLabelValues(p, status).Inc()
	m.modelDuration.WithLabelValues(p).Observe(c.Duration.Seconds())
	if c.PromptTokens > 0 {
		m.tokens.WithLabelValues(p, "prompt").Add(float64(c.PromptTokens))
	}
	if c.CompletionTokens > 0 {
		m.tokens.WithLabelValues(p, "completion").Add(float64(c.CompletionTokens))
	}
	if c.Cost > 0 {
		m.cost.WithLabelValues(p).Add(c.Cost)
	}
}

// StreamOpened counts an open SSE stream; call the function it returns when the stream ends.
func (m *Metrics) StreamOpened() (closed func()) {
	m.streams.Inc()
	return m.streams.Dec
}

// IngestSpans counts the spans of one ingest request: those stored and those refused.
// format is IngestSDK or IngestOTLP.
func (m *Metrics) IngestSpans(format string, accepted, rejected int) {
	m.ingest.WithLabelValues(format, "accepted").Add(float64(accepted))
	m.ingest.WithLabelValues(format, "rejected").Add(float64(rejected))
}

// SetQueue sets how agentplane_queue_depth is counted at each scrape (the store's count of
// pending executions, bounded); until it is set the gauge is absent.
func (m *Metrics) SetQueue(f QueueFunc) { m.queue.Store(&f) }

// queueTimeout bounds the count of a scrape: a slow or failing database leaves the gauge out
// of that scrape rather than holding it up or failing the others.
const queueTimeout = 2 * time.Second

var queueDesc = prometheus.NewDesc("agentplane_queue_depth",
	"Executions waiting in the queue (pending) in the database this process uses; the same on every node of one database (aggregate with max).", nil, nil)

// queueCollector counts the queue when scraped: the count is one bounded query on an index
// of pending rows, so no background work keeps it fresh between scrapes.
type queueCollector struct{ m *Metrics }

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueDesc }

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.queue.Load()
	if f == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	n, err := (*f)(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(n))
}

// label is v, or "unknown" for an empty value.
func label(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}
