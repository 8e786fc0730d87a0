package api

import (
	"net/http"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// traceDetail is a trace with its spans as a tree.
type traceDetail struct {
	*store.Trace
	SpanCount int               `json:"span_count"`
	Spans     []*store.SpanNode `json:"spans" doc:"The root spans (those without a parent among the trace's spans) in start order, each with its children nested."`
}

// traceSummary is the answer of GET /traces/summary.
type traceSummary struct {
	Window  string               `json:"window" enum:"1h,24h,7d,30d"`
	Bucket  string               `json:"bucket" enum:"hour,day"`
	From    store.Time           `json:"from" doc:"Start of the window: now minus the window, rounded down to the start of its bucket (the summary reads hourly and daily rollups)."`
	To      store.Time           `json:"to" doc:"End of the window (now)."`
	Buckets []*store.TraceBucket `json:"buckets" doc:"One entry per agent and bucket holding runs, ordered by bucket start then agent."`
}

var summaryWindows = map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}
var summaryBuckets = map[string]time.Duration{"hour": time.Hour, "day": 24 * time.Hour}

func (s *Server) traceRoutes() []route {
	const tag = "Traces"
	return []route{
		{method: "GET", path: v1 + "/traces", op: "listTraces", tag: tag, scope: "traces:read", summary: "List traces, newest first",
			desc: "The workspace's traces, newest first, with their totals (tokens, cost, duration) but without spans: those of executions and " +
				"those ingested (`POST /traces/ingest`, OTLP). Filter by `agent_id`, `execution_id`, `session_id`, `end_user_id`, `status`, " +
				"`service_name` (an ingested trace's resource service), a creation window (`created_after`, `created_before`, RFC 3339; an ingested " +
				"trace is created at its first span's start), and inclusive cost (`min_cost`, `max_cost`, USD) and latency (`min_duration_ms`, " +
				"`max_duration_ms`) ranges; a trace still running has no duration and is left out by a latency bound. A bound that is not a number " +
				"is 400; a negative one, or a minimum above its maximum, 422.", list: true,
			params: []param{{name: "agent_id", typ: "string"}, {name: "execution_id", typ: "string"}, {name: "session_id", typ: "string"},
				{name: "end_user_id", typ: "string"}, {name: "status", typ: "string", enum: store.ExecutionStatuses},
				{name: "service_name", typ: "string", desc: "Only the ingested traces of this service (OTLP resource `service.name`)."},
				{name: "created_after", typ: "string", desc: "RFC 3339 time."}, {name: "created_before", typ: "string", desc: "RFC 3339 time."},
				{name: "min_cost", typ: "number", desc: "Only traces costing at least this (USD)."},
				{name: "max_cost", typ: "number", desc: "Only traces costing at most this (USD)."},
				{name: "min_duration_ms", typ: "integer", desc: "Only traces that took at least this long (ms)."},
				{name: "max_duration_ms", typ: "integer", desc: "Only traces that took at most this long (ms)."}},
			errs: []int{http.StatusUnprocessableEntity},
			resp: store.Trace{}, h: s.listTraces},
		{method: "GET", path: v1 + "/traces/summary", op: "getTraceSummary", tag: tag, scope: "traces:read", summary: "Summarise traces per agent and time bucket",
			desc: "Runs (traces started in the window), errors (failed runs) and error rate, tokens, cost and latency percentiles " +
				"(p50, p95, p99 of the duration of the runs that ended, interpolated as PostgreSQL's percentile_cont, within 0.5 %) per agent and time bucket. " +
				"It reads hourly and daily rollups kept as traces are written, never the traces, so the window starts at the start of its first bucket; " +
				"the percentiles come from a DDSketch of 0.5 % relative accuracy. " +
				"`window` is 1h, 24h (default), 7d or 30d back from now; `bucket` is hour or day (UTC; default hour for 1h and 24h, day for 7d and 30d). " +
				"Another value is 422. Buckets without runs are left out.",
			params: []param{{name: "window", typ: "string", enum: []string{"1h", "24h", "7d", "30d"}, desc: "How far back from now (default 24h)."},
				{name: "bucket", typ: "string", enum: []string{"hour", "day"}, desc: "Bucket size (default hour for 1h and 24h, day for 7d and 30d)."}},
			errs: []int{http.StatusUnprocessableEntity}, nocache: true, resp: traceSummary{}, h: s.traceSummary},
		{method: "GET", path: v1 + "/traces/{id}", op: "getTrace", tag: tag, scope: "traces:read", summary: "Get a trace with its spans as a tree",
			desc: "One trace with its spans as a tree: the roots in start order, each span's `children` nested, with `duration_ms` on each. " +
				"An execution's spans cover prompt rendering, history trimming, each model call, tool call, guardrail check, sub-agent and approval wait.",
			resp: traceDetail{}, h: s.getTrace},
		{method: "POST", path: v1 + "/traces/ingest", op: "ingestSpans", tag: tag, scope: "traces:write", summary: "Ingest a batch of spans (SDK)", itemwise: true,
			desc: "Stores spans sent by an SDK in agentplane's own shape (the Go SDK's `IngestSpans`). Each span needs `id` and `trace_id` " +
				"(1 to 128 letters, digits, `-`, `_`, `.` or `:`; OTLP's hex ids, KSUIDs and UUIDs fit), a `name`, and `started_at`; `ended_at` may not be before it. A span sent again " +
				"(same trace and id) replaces the stored one. Invalid spans (breaking the schema or a rule) are rejected one by one and listed in `errors`; the others are stored. " +
				"Each trace's row is created or updated with its totals (tokens and cost of its `llm` and `embedding` spans; cost from the model " +
				"catalog's prices when a span gives a known `model` and no `cost`; the provider too, when not given), so ingested traces show in `GET /traces` and the summary. " +
				"Body: at most 5 MiB (413), gzip accepted (`Content-Encoding: gzip`, at most 5 MiB once inflated), at most 10,000 spans (413).",
			body: ingestRequest{}, resp: ingestResult{}, errs: []int{http.StatusRequestEntityTooLarge}, h: s.ingestSpans},
		{method: "POST", path: v1 + "/otlp/v1/traces", op: "exportOTLPTraces", tag: tag, scope: "traces:write", summary: "Receive OTLP/HTTP traces",
			desc: "The OTLP/HTTP traces endpoint: point an OpenTelemetry exporter at it " +
				"(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=https://host/api/v1/otlp/v1/traces`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS=X-API-Key=ap_…`). " +
				"The body is an ExportTraceServiceRequest in protobuf (`application/x-protobuf`) or JSON (`application/json`), optionally gzip " +
				"(`Content-Encoding: gzip`); the answer is an ExportTraceServiceResponse in the same encoding, whose `partial_success` counts the " +
				"rejected spans (no trace or span id, no name, an end before the start) with a message naming them; the rest are stored. " +
				"Ids keep their hex form, so a trace exported twice is upserted. OpenTelemetry GenAI attributes map onto span fields: " +
				"`gen_ai.response.model`/`gen_ai.request.model` → `model`, `gen_ai.provider.name`/`gen_ai.system` → `provider`, " +
				"`gen_ai.usage.input_tokens`/`output_tokens` → `token_usage` (cost from the model catalog's prices), `gen_ai.operation.name` → `kind`, " +
				"`gen_ai.input.messages`/`gen_ai.output.messages` → `input`/`output`; `session.id` or `gen_ai.conversation.id`, `user.id` or `enduser.id`, " +
				"and `gen_ai.agent.id` set the trace's session, end user and agent; the resource's `service.name` is kept. " +
				"Span events are kept in order as the attribute `otel.events` (`[{name, time, attributes}]`, exceptions from `RecordError` among them) " +
				"and links as `otel.links` (`[{trace_id, span_id, attributes}]`); an error status without a message takes the last exception's " +
				"`exception.type: exception.message`. " +
				"Limits: 5 MiB per body, as sent and inflated (413), 10,000 spans per request (413); a body that cannot be decoded is 400; " +
				"another media type is 415. Errors use the JSON error envelope.",
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
	f := store.TraceFilter{AgentID: q.Get("agent_id"), ExecutionID: q.Get("execution_id"), SessionID: q.Get("session_id"),
		EndUserID: q.Get("end_user_id"), Status: q.Get("status"), ServiceName: q.Get("service_name")}
	if f.Status != "" {
		if err := domain.OneOf("status", f.Status, store.ExecutionStatuses); err != nil {
			return badRequest("%s", err.Error())
		}
	}
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
	writeData(w, http.StatusOK, traceDetail{Trace: t, SpanCount: len(t.Spans), Spans: store.SpanTree(t.Spans)})
	return nil
}

func (s *Server) traceSummary(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	window := q.Get("window")
	if window == "" {
		window = "24h"
	}
	span, ok := summaryWindows[window]
	if !ok {
		return domain.Invalid("window", "must be one of 1h, 24h, 7d, 30d, got %q", window)
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
	to := store.Now()
	from := store.Time{Time: to.Add(-span).Truncate(size)}
	rows, err := s.store.TraceSummary(r.Context(), s.workspace(r), from, to, size)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, traceSummary{Window: window, Bucket: bucket, From: from, To: to, Buckets: rows})
	return nil
}
