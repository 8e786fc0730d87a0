package api

import (
	"net/http"
	"net/url"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// traceDetail is a trace with its spans as a tree.
type traceDetail struct {
	*domain.Trace
	SpanCount int                `json:"span_count"`
	Spans     []*domain.SpanNode `json:"spans" doc:"The root spans (those without a parent among the trace's spans) in start order, each with its children nested."`
}

// traceSummary is the answer of GET /traces/summary.
type traceSummary struct {
	Window  string                `json:"window" enum:"1h,24h,7d,30d"`
	Bucket  string                `json:"bucket" enum:"hour,day"`
	From    domain.Time           `json:"from" doc:"Start of the window: now minus the window, rounded down to the start of its bucket (the summary reads hourly and daily rollups)."`
	To      domain.Time           `json:"to" doc:"End of the window (now)."`
	Buckets []*domain.TraceBucket `json:"buckets" doc:"One entry per agent and bucket holding runs, ordered by bucket start then agent."`
}

// usageBreakdown is the answer of GET /traces/usage.
type usageBreakdown struct {
	Window  string               `json:"window" enum:"1h,24h,7d,30d"`
	GroupBy string               `json:"group_by" enum:"model,end_user"`
	From    domain.Time          `json:"from" doc:"Start of the window: now minus the window, rounded down to the start of its hour (1h, 24h) or UTC day (7d, 30d): the breakdown reads hourly and daily rollups."`
	To      domain.Time          `json:"to" doc:"End of the window (now)."`
	Total   int                  `json:"total" doc:"How many models or end users the window holds; groups lists the costliest limit of them."`
	Groups  []*domain.UsageGroup `json:"groups" doc:"The costliest first (then the most runs)."`
}

var summaryWindows = map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}
var summaryBuckets = map[string]time.Duration{"hour": time.Hour, "day": 24 * time.Hour}

func (s *Server) traceRoutes() []route {
	const tag = "Traces"
	return []route{
		{method: "GET", path: v1 + "/traces", op: "listTraces", tag: tag, scope: "traces:read", summary: "List traces, newest first",
			list: true,
			params: []param{{name: "agent_id", typ: "string"}, {name: "execution_id", typ: "string"}, {name: "session_id", typ: "string"},
				{name: "end_user_id", typ: "string"}, {name: "status", typ: "string", enum: domain.ExecutionStatuses},
				{name: "service_name", typ: "string", desc: "Only the ingested traces of this service (OTLP resource `service.name`)."},
				{name: "created_after", typ: "string", desc: "RFC 3339 time."}, {name: "created_before", typ: "string", desc: "RFC 3339 time."},
				{name: "min_cost", typ: "number", desc: "Only traces costing at least this (USD)."},
				{name: "max_cost", typ: "number", desc: "Only traces costing at most this (USD)."},
				{name: "min_duration_ms", typ: "integer", desc: "Only traces that took at least this long (ms)."},
				{name: "max_duration_ms", typ: "integer", desc: "Only traces that took at most this long (ms)."}},
			errs: []int{http.StatusUnprocessableEntity},
			resp: domain.Trace{}, h: s.listTraces},
		{method: "GET", path: v1 + "/traces/summary", op: "getTraceSummary", tag: tag, scope: "traces:read", summary: "Summarise traces per agent and time bucket",
			params: []param{{name: "window", typ: "string", enum: []string{"1h", "24h", "7d", "30d"}, desc: "How far back from now (default 24h)."},
				{name: "bucket", typ: "string", enum: []string{"hour", "day"}, desc: "Bucket size (default hour for 1h and 24h, day for 7d and 30d)."}},
			errs: []int{http.StatusUnprocessableEntity}, nocache: true, resp: traceSummary{}, h: s.traceSummary},
		{method: "GET", path: v1 + "/traces/usage", op: "getUsageBreakdown", tag: tag, scope: "traces:read", summary: "Cost and tokens by model or by end user",
			params: []param{{name: "group_by", typ: "string", enum: domain.UsageDimensions, desc: "What to group by.", required: true},
				{name: "window", typ: "string", enum: []string{"1h", "24h", "7d", "30d"}, desc: "How far back from now (default 24h)."},
				{name: "agent_id", typ: "string", desc: "Only this agent's runs."},
				{name: "limit", typ: "integer", desc: "How many groups to list, 1 to 100 (default 20)."}},
			errs: []int{http.StatusUnprocessableEntity}, nocache: true, resp: usageBreakdown{}, h: s.usageBreakdown},
		{method: "GET", path: v1 + "/traces/{id}", op: "getTrace", tag: tag, scope: "traces:read", summary: "Get a trace with its spans as a tree",
			resp: traceDetail{}, h: s.getTrace},
		{method: "POST", path: v1 + "/traces/ingest", op: "ingestSpans", tag: tag, scope: "traces:write", summary: "Ingest a batch of spans (SDK)", itemwise: true,
			body: ingestRequest{}, resp: ingestResult{}, errs: []int{http.StatusRequestEntityTooLarge}, h: s.ingestSpans},
		{method: "POST", path: v1 + "/otlp/v1/traces", op: "exportOTLPTraces", tag: tag, scope: "traces:write", summary: "Receive OTLP/HTTP traces",
			raw: true, resp: otlpResponseDoc{}, errs: []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType},
			h: s.exportOTLP},
	}
}

func (s *Server) listTraces(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.TraceFilter{AgentID: q.Get("agent_id"), ExecutionID: q.Get("execution_id"), SessionID: q.Get("session_id"),
		EndUserID: q.Get("end_user_id"), Status: q.Get("status"), ServiceName: q.Get("service_name")}
	// status is a documented enum: the route table checks it against the documented values.
	if err := createdRange(q, &f.CreatedAfter, &f.CreatedBefore); err != nil {
		return err
	}
	if f.MinCost, f.MaxCost, err = numberRange(q, "min_cost", "max_cost", parseFinite); err != nil {
		return err
	}
	if f.MinDurationMS, f.MaxDurationMS, err = numberRange(q, "min_duration_ms", "max_duration_ms", parseInt64); err != nil {
		return err
	}
	items, total, err := s.store.TraceList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) getTrace(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.TraceGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, traceDetail{Trace: t, SpanCount: len(t.Spans), Spans: domain.SpanTree(t.Spans)})
	return nil
}

// summaryWindow reads the window query parameter (default 24h) of the summaries.
func summaryWindow(q url.Values) (string, time.Duration, error) {
	window := q.Get("window")
	if window == "" {
		window = "24h"
	}
	span, ok := summaryWindows[window]
	if !ok {
		return "", 0, domain.Invalid("window", "must be one of 1h, 24h, 7d, 30d, got %q", window)
	}
	return window, span, nil
}

func (s *Server) traceSummary(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	window, span, err := summaryWindow(q)
	if err != nil {
		return err
	}
	bucket := q.Get("bucket")
	if bucket == "" {
		bucket = "hour"
		if span > 24*time.Hour {
			bucket = "day"
		}
	}
	size, ok := summaryBuckets[bucket]
	if !ok {
		return domain.Invalid("bucket", "must be hour or day, got %q", bucket)
	}
	to := domain.Now()
	from := domain.Time{Time: to.Add(-span).Truncate(size)}
	rows, err := s.store.TraceSummary(r.Context(), s.workspace(r), from, to, size)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, traceSummary{Window: window, Bucket: bucket, From: from, To: to, Buckets: rows})
	return nil
}

func (s *Server) usageBreakdown(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	window, span, err := summaryWindow(q)
	if err != nil {
		return err
	}
	f := domain.UsageFilter{Dimension: q.Get("group_by"), AgentID: q.Get("agent_id"), Period: time.Hour}
	// group_by is required and one of domain.UsageDimensions: the route table checks it.
	if f.Limit, err = limitParam(q, 20); err != nil {
		return err
	}
	if span > 24*time.Hour {
		f.Period = 24 * time.Hour
	}
	f.To = domain.Now()
	f.From = domain.Time{Time: f.To.Add(-span).Truncate(f.Period)}
	groups, total, err := s.store.UsageBreakdown(r.Context(), s.workspace(r), f)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, usageBreakdown{Window: window, GroupBy: f.Dimension, From: f.From, To: f.To, Total: total, Groups: groups})
	return nil
}
