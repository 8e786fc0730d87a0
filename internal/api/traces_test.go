package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
)

// TestOTLPExporter sends spans with the official OpenTelemetry Go exporter (OTLP/HTTP,
// protobuf, gzip) and reads them back with the same ids, parent links and GenAI fields.
func TestOTLPExporter(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(e.ts.URL+"/api/v1/otlp/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"X-API-Key": e.key}), otlptracehttp.WithCompression(otlptracehttp.GzipCompression),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "checkout"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
	tracer := tp.Tracer("agent-framework")
	rootCtx, root := tracer.Start(ctx, "invoke_agent support", oteltrace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("session.id", "conv-42"),
		attribute.String("user.id", "user-7"), attribute.String("gen_ai.agent.id", "support-bot")))
	_, call := tracer.Start(rootCtx, "chat gpt-4o", oteltrace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.String("gen_ai.provider.name", "openai"), attribute.Int("gen_ai.usage.input_tokens", 1000),
		attribute.Int("gen_ai.usage.output_tokens", 100), attribute.String("gen_ai.input.messages", `[{"role":"user","content":"hi"}]`)))
	call.SetStatus(codes.Error, "rate limited")
	call.End()
	root.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("export: %v", err)
	}
	traceID, rootID, callID := root.SpanContext().TraceID().String(), root.SpanContext().SpanID().String(), call.SpanContext().SpanID().String()
	tr, err := e.c.TraceGet(ctx, traceID)
	if err != nil {
		t.Fatal(err)
	}
	if tr.ID != traceID || tr.SpanCount != 2 || len(tr.Spans) != 1 || tr.Spans[0].ID != rootID || len(tr.Spans[0].Children) != 1 {
		t.Fatalf("trace: %+v", tr)
	}
	rs, cs := tr.Spans[0], tr.Spans[0].Children[0]
	m, _ := e.store.LLMModelGet(ctx, e.ws, "gpt-4o")
	wantCost := (1000*m.InputPricePerMillion + 100*m.OutputPricePerMillion) / 1e6
	if cs.ID != callID || cs.ParentID == nil || *cs.ParentID != rootID || cs.Kind != "llm" || cs.Model == nil || *cs.Model != "gpt-4o" ||
		*cs.Provider != "openai" || client.Val(cs.TokenUsage.PromptTokens) != 1000 || client.Val(cs.TokenUsage.CompletionTokens) != 100 || cs.Cost != wantCost ||
		cs.Status != "error" || *cs.Error != "rate limited" || string(cs.Input) != `[{"role":"user","content":"hi"}]` ||
		*cs.ServiceName != "checkout" || cs.DurationMs == nil {
		t.Fatalf("model call span: %+v", cs)
	}
	if rs.Kind != "agent" || rs.ParentID != nil || cs.Attributes["otel.scope.name"] != "agent-framework" {
		t.Fatalf("root span: %+v", rs)
	}
	if tr.Status != "failed" || client.Val(tr.TokenUsage.TotalTokens) != 1100 || tr.Cost != wantCost || *tr.SessionID != "conv-42" ||
		*tr.EndUserID != "user-7" || *tr.AgentID != "support-bot" || *tr.ServiceName != "checkout" || tr.Name != "invoke_agent support" {
		t.Fatalf("trace totals: %+v", tr)
	}
	l, err := e.c.TraceList(ctx, client.ListTracesParams{EndUserID: "user-7", Status: "failed"})
	if err != nil || len(l.Data) != 1 || l.Data[0].ID != traceID {
		t.Fatalf("list: %+v %v", l, err)
	}
}

// TestOTLPEventsAndLinks: span events (an exception recorded with span.RecordError among
// them) and links sent by the official exporter are kept on the span as otel.events and
// otel.links, in order, with their attributes; an error status without a message takes the
// recorded exception's.
func TestOTLPEventsAndLinks(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(e.ts.URL+"/api/v1/otlp/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"X-API-Key": e.key}), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tracer := tp.Tracer("tools")
	_, earlier := tracer.Start(ctx, "plan")
	earlier.End()
	at := time.Date(2026, 11, 23, 10, 0, 0, 123456789, time.UTC)
	_, tool := tracer.Start(ctx, "execute_tool lookup_order", oteltrace.WithLinks(oteltrace.Link{SpanContext: earlier.SpanContext(),
		Attributes: []attribute.KeyValue{attribute.String("reason", "planned by")}}))
	tool.AddEvent("retry", oteltrace.WithAttributes(attribute.Int("attempt", 2)), oteltrace.WithTimestamp(at))
	tool.RecordError(fmt.Errorf("order 42 not found"))
	tool.SetStatus(codes.Error, "")
	tool.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("export: %v", err)
	}
	sp, err := e.store.SpanGet(ctx, e.ws, tool.SpanContext().TraceID().String(), tool.SpanContext().SpanID().String())
	if err != nil {
		t.Fatal(err)
	}
	if sp.Status != "error" || sp.Error == nil || *sp.Error != "*errors.errorString: order 42 not found" {
		t.Fatalf("error of the span: %s %v", sp.Status, sp.Error)
	}
	var attrs struct {
		Events []struct {
			Name       string         `json:"name"`
			Time       string         `json:"time"`
			Attributes map[string]any `json:"attributes"`
		} `json:"otel.events"`
		Links []struct {
			TraceID    string         `json:"trace_id"`
			SpanID     string         `json:"span_id"`
			Attributes map[string]any `json:"attributes"`
		} `json:"otel.links"`
	}
	raw, _ := json.Marshal(sp.Attributes)
	if err := json.Unmarshal(raw, &attrs); err != nil {
		t.Fatalf("attributes %s: %v", raw, err)
	}
	ev := attrs.Events
	if len(ev) != 2 || ev[0].Name != "retry" || ev[0].Time != "2026-11-23T10:00:00.123456789Z" || ev[0].Attributes["attempt"] != float64(2) ||
		ev[1].Name != "exception" || ev[1].Attributes["exception.message"] != "order 42 not found" {
		t.Fatalf("events: %s", raw)
	}
	l := attrs.Links
	if len(l) != 1 || l[0].SpanID != earlier.SpanContext().SpanID().String() || l[0].TraceID != earlier.SpanContext().TraceID().String() ||
		l[0].Attributes["reason"] != "planned by" {
		t.Fatalf("links: %s", raw)
	}
}

// otlpBody builds an OTLP request: n valid spans of one trace (the first the root), and
// the invalid spans given.
func otlpBody(t *testing.T, traceHex string, n int, invalid ...func(ptrace.Span)) ptraceotlp.ExportRequest {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "batch")
	sl := rs.ScopeSpans().AppendEmpty().Spans()
	var tid pcommon.TraceID
	if b, err := hex.DecodeString(traceHex); err != nil || copy(tid[:], b) != 16 {
		t.Fatalf("trace id %q: %v", traceHex, err)
	}
	start := time.Now().Add(-time.Minute)
	for i := range n {
		sp := sl.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID{0xa, byte(i >> 8), byte(i), 1, 2, 3, 4, 5})
		if i > 0 {
			sp.SetParentSpanID(pcommon.SpanID{0xa, 0, 0, 1, 2, 3, 4, 5})
		}
		sp.SetName(fmt.Sprintf("step %d", i))
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Millisecond)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i+10) * time.Millisecond)))
		sp.Attributes().PutStr("gen_ai.request.model", "gpt-4o-mini")
		sp.Attributes().PutInt("gen_ai.usage.input_tokens", 10)
	}
	for i, f := range invalid {
		sp := sl.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID{0xb, byte(i), 1, 2, 3, 4, 5, 6})
		sp.SetName("bad")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		f(sp)
	}
	return ptraceotlp.NewExportRequestFromTraces(td)
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// postRaw sends body to path with the headers given and returns the status and body.
func (e *testEnv) postRaw(t *testing.T, path, key string, body []byte, header map[string]string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest("POST", e.ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header
}

func TestOTLPProtobufGzipPartialSuccessAndUpsert(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	const traceHex = "5b8efff798038103d269b633813fc60c"
	req := otlpBody(t, traceHex, 5,
		func(sp ptrace.Span) { sp.SetSpanID(pcommon.SpanID{}) },                           // no span id
		func(sp ptrace.Span) { sp.SetName("") },                                           // no name
		func(sp ptrace.Span) { sp.SetEndTimestamp(sp.StartTimestamp() - 1) },              // ends before it starts
		func(sp ptrace.Span) { sp.SetTraceID(pcommon.TraceID{}) },                         // no trace id
		func(sp ptrace.Span) { sp.Attributes().PutInt("gen_ai.usage.output_tokens", -5) }, // negative usage
	)
	pb, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // the same export twice: upserted, not duplicated
		status, body, h := e.postRaw(t, "/api/v1/otlp/v1/traces", e.key, gzipped(t, pb),
			map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})
		if status != 200 || h.Get("Content-Type") != "application/x-protobuf" {
			t.Fatalf("round %d: %d %s %s", round, status, h.Get("Content-Type"), body)
		}
		resp := ptraceotlp.NewExportResponse()
		if err := resp.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		ps := resp.PartialSuccess()
		if ps.RejectedSpans() != 5 || !strings.Contains(ps.ErrorMessage(), "name is empty") ||
			!strings.Contains(ps.ErrorMessage(), "end_time_unix_nano is before start_time_unix_nano") || !strings.Contains(ps.ErrorMessage(), "span_id is empty") {
			t.Fatalf("partial success: %d %q", ps.RejectedSpans(), ps.ErrorMessage())
		}
	}
	tr, err := e.store.TraceGet(ctx, e.ws, traceHex)
	if err != nil || len(tr.Spans) != 5 || *tr.ServiceName != "batch" || tr.TokenUsage.PromptTokens != 50 {
		t.Fatalf("stored %+v %v", tr, err)
	}
	l, err := e.c.TraceList(ctx, client.ListTracesParams{})
	if err != nil || l.Pagination.Total != 1 {
		t.Fatalf("list after two exports: %+v %v", l, err)
	}
	// JSON, not compressed: the answer is JSON, the spans already stored stay one each.
	js, err := otlpBody(t, traceHex, 3).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	status, body, h := e.postRaw(t, "/api/v1/otlp/v1/traces", e.key, js, map[string]string{"Content-Type": "application/json"})
	if status != 200 || h.Get("Content-Type") != "application/json" || strings.Contains(string(body), "rejected") {
		t.Fatalf("JSON export: %d %s %s", status, h.Get("Content-Type"), body)
	}
	if tr, _ := e.store.TraceGet(ctx, e.ws, traceHex); len(tr.Spans) != 5 {
		t.Fatalf("%d spans after the JSON export", len(tr.Spans))
	}
	// Too many spans, and too large a body (as sent, and once inflated).
	many, _ := otlpBody(t, "7b8efff798038103d269b633813fc60c", maxIngestSpans+1).MarshalProto()
	if status, body, _ := e.postRaw(t, "/api/v1/otlp/v1/traces", e.key, many, map[string]string{"Content-Type": "application/x-protobuf"}); status != 413 ||
		!strings.Contains(string(body), "at most 10000 spans") {
		t.Fatalf("too many spans: %d %s", status, body)
	}
	huge := bytes.Repeat([]byte{'x'}, maxIngestBytes+1)
	if status, body, _ := e.postRaw(t, "/api/v1/otlp/v1/traces", e.key, huge, map[string]string{"Content-Type": "application/x-protobuf"}); status != 413 ||
		!strings.Contains(string(body), `"request_too_large"`) && !strings.Contains(string(body), `"error"`) {
		t.Fatalf("huge body: %d %s", status, body)
	}
	if status, body, _ := e.postRaw(t, "/api/v1/otlp/v1/traces", e.key, gzipped(t, huge),
		map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}); status != 413 || !strings.Contains(string(body), "inflated") {
		t.Fatalf("gzip bomb: %d %s", status, body)
	}
	if m := e.srv.metrics; m == nil {
		t.Fatal("no metrics")
	}
	rec := getMetrics(t, e)
	if !strings.Contains(rec, `agentplane_ingest_spans_total{format="otlp",result="accepted"} 13`) ||
		!strings.Contains(rec, `agentplane_ingest_spans_total{format="otlp",result="rejected"} 10`) {
		t.Fatalf("ingest metrics:\n%s", grepLines(rec, "ingest"))
	}
}

func getMetrics(t *testing.T, e *testEnv) string {
	t.Helper()
	resp, err := http.Get(e.ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// otherWorkspaceKey makes a workspace of its own and a key of it with the scopes given.
func otherWorkspaceKey(t *testing.T, e *testEnv, slug string, scopes ...string) string {
	t.Helper()
	ctx := context.Background()
	w, err := e.store.WorkspaceCreate(ctx, &domain.Workspace{Name: slug, Slug: slug})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := auth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: w.ID, Name: slug, KeyPrefix: auth.KeyPrefix(raw), Scopes: scopes}, auth.HashKey(raw)); err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestTraceRoutes(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	agent, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}, EndUserID: "eu-1"})
	if err != nil {
		t.Fatal(err)
	}
	readOnly := e.newKey(&domain.APIKey{Name: "read", Scopes: domain.Strings{"traces:read"}})
	other := otherWorkspaceKey(t, e, "other", "*")
	now := time.Now().UTC()
	span := func(id, parent, extra string) string {
		p := ""
		if parent != "" {
			p = `"parent_id":"` + parent + `",`
		}
		return `{"id":"` + id + `","trace_id":"sdk-trace-1",` + p + `"name":"step ` + id + `","started_at":"` + now.Add(-time.Second).Format(time.RFC3339Nano) +
			`","ended_at":"` + now.Format(time.RFC3339Nano) + `"` + extra + `}`
	}
	ingest := `{"spans":[` + span("root", "", `,"agent_id":"`+agent.ID+`","session_id":"s-1","end_user_id":"eu-2"`) + `,` +
		span("llm-1", "root", `,"model":"gpt-4o-mini","token_usage":{"prompt_tokens":1000,"completion_tokens":10},"input":{"q":"hi"}`) + `,` +
		`{"id":"bad","trace_id":"sdk-trace-1","started_at":"` + now.Format(time.RFC3339) + `"},` +
		span("late", "root", `,"ended_at":"2000-01-01T00:00:00Z"`) + `,` +
		`{"id":"bad-kind","trace_id":"sdk-trace-1","name":"x","kind":"robot","started_at":"` + now.Format(time.RFC3339) + `"},` +
		`{"id":3,"trace_id":"sdk-trace-1"},` + span("a/b", "", "") + `]}`
	e.run([]scenario{
		{name: "list by execution", method: "GET", path: "/api/v1/traces?execution_id=" + x.ID, status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.id": x.TraceID, "data.0.end_user_id": "eu-1", "data.0.status": "completed"}},
		{name: "list by end user", method: "GET", path: "/api/v1/traces?end_user_id=eu-1&status=completed&agent_id=" + agent.ID, status: 200,
			fields: map[string]any{"pagination.total": 1}},
		{name: "list by time", method: "GET", path: "/api/v1/traces?created_before=2000-01-01T00:00:00Z", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list bad status", method: "GET", path: "/api/v1/traces?status=great", status: 400, message: "status"},
		{name: "list bad time", method: "GET", path: "/api/v1/traces?created_after=yesterday", status: 400, message: "created_after"},
		{name: "get as tree", method: "GET", path: "/api/v1/traces/" + x.TraceID, status: 200,
			check: func(t *testing.T, b map[string]any) {
				roots := lookup(b, "data.spans").([]any)
				n := int(lookup(b, "data.span_count").(float64))
				if len(roots) != 1 || n != 2 || // the run and its model call: no prompt span, nothing was rendered
					lookup(b, "data.spans.0.kind") != "agent" || lookup(b, "data.spans.0.duration_ms") == nil {
					t.Fatalf("tree: %d roots of %d spans: %v", len(roots), n, b)
				}
				if kids := lookup(b, "data.spans.0.children").([]any); len(kids) != n-1 {
					t.Fatalf("root has %d children of %d spans", len(kids), n)
				}
			}},
		{name: "usage by model", method: "GET", path: "/api/v1/traces/usage?group_by=model", status: 200,
			fields: map[string]any{"data.group_by": "model", "data.window": "24h", "data.total": 1, "data.groups.0.key": "gpt-4o-mini",
				"data.groups.0.runs": 1, "data.groups.0.errors": 0}},
		{name: "usage by end user", method: "GET", path: "/api/v1/traces/usage?group_by=end_user&window=30d&agent_id=" + agent.ID, status: 200,
			fields: map[string]any{"data.total": 1, "data.groups.0.key": "eu-1", "data.groups.0.runs": 1},
			check: func(t *testing.T, b map[string]any) {
				if lookup(b, "data.groups.0.token_usage.total_tokens").(float64) <= 0 {
					t.Fatalf("no tokens: %v", b)
				}
				if from := lookup(b, "data.from").(string); !strings.HasSuffix(from, "T00:00:00.000Z") {
					t.Fatalf("a 30d window starts at a UTC day: %s", from)
				}
			}},
		{name: "usage of another agent", method: "GET", path: "/api/v1/traces/usage?group_by=model&agent_id=nope", status: 200,
			fields: map[string]any{"data.total": 0}},
		{name: "usage needs group_by", method: "GET", path: "/api/v1/traces/usage", status: 400, message: "group_by"},
		{name: "usage bad group_by", method: "GET", path: "/api/v1/traces/usage?group_by=agent", status: 400, message: "group_by"},
		{name: "usage bad limit", method: "GET", path: "/api/v1/traces/usage?group_by=model&limit=0", status: 400, message: "limit"},
		{name: "usage bad window", method: "GET", path: "/api/v1/traces/usage?group_by=model&window=2d", status: 400, message: "window"},
		{name: "summary", method: "GET", path: "/api/v1/traces/summary", status: 200,
			fields: map[string]any{"data.window": "24h", "data.bucket": "hour", "data.buckets.0.agent_id": agent.ID, "data.buckets.0.runs": 1,
				"data.buckets.0.errors": 0, "data.buckets.0.error_rate": 0}},
		{name: "summary by day", method: "GET", path: "/api/v1/traces/summary?window=30d", status: 200, fields: map[string]any{"data.bucket": "day"}},
		{name: "summary bad window", method: "GET", path: "/api/v1/traces/summary?window=2h", status: 400, code: "bad_request", message: "window"},
		{name: "summary bad bucket", method: "GET", path: "/api/v1/traces/summary?bucket=minute", status: 400, message: "bucket"},
		{name: "ingest partial", method: "POST", path: "/api/v1/traces/ingest", body: ingest, status: 200,
			fields: map[string]any{"data.accepted": 2, "data.rejected": 5, "data.errors.0.index": 2, "data.errors.0.message": "name is required",
				"data.errors.1.message": "ended_at is before started_at", "data.errors.2.id": "bad-kind", "data.errors.3.index": 5,
				"data.errors.4.id": "a/b", "data.errors.4.message": "id must be 1 to 128 letters, digits, '-', '_', '.' or ':'"}},
		{name: "ingested trace", method: "GET", path: "/api/v1/traces/sdk-trace-1", status: 200,
			fields: map[string]any{"data.span_count": 2, "data.spans.0.id": "root", "data.spans.0.children.0.id": "llm-1",
				"data.spans.0.children.0.kind": "llm", "data.spans.0.children.0.input.q": "hi", "data.spans.0.children.0.provider": "openai", "data.spans.0.children.0.duration_ms": 1000,
				"data.agent_id": agent.ID, "data.session_id": "s-1", "data.end_user_id": "eu-2", "data.token_usage.total_tokens": 1010,
				"data.metadata.source": "ingest"},
			check: func(t *testing.T, b map[string]any) {
				if c := lookup(b, "data.cost").(float64); c <= 0 {
					t.Fatalf("no cost from the catalog: %v", c)
				}
			}},
		{name: "ingest again", method: "POST", path: "/api/v1/traces/ingest", body: ingest, status: 200, fields: map[string]any{"data.accepted": 2}},
		{name: "still two spans", method: "GET", path: "/api/v1/traces/sdk-trace-1", status: 200, fields: map[string]any{"data.span_count": 2}},
		// Studio's Traces filters: the ingested trace costs something and took 1 s; the run, a few tokens, costs far less.
		{name: "list by cost", method: "GET", path: "/api/v1/traces?min_cost=0.0001", status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.id": "sdk-trace-1"}},
		{name: "list by cost and latency", method: "GET", path: "/api/v1/traces?min_cost=0.0001&max_cost=1&min_duration_ms=900&max_duration_ms=1100", status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.id": "sdk-trace-1"}},
		{name: "list by latency none", method: "GET", path: "/api/v1/traces?min_duration_ms=1001", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list by service none", method: "GET", path: "/api/v1/traces?service_name=checkout", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list bad cost", method: "GET", path: "/api/v1/traces?min_cost=cheap", status: 400, message: "min_cost"},
		{name: "list infinite cost", method: "GET", path: "/api/v1/traces?max_cost=Inf", status: 400, message: "max_cost"},
		{name: "list negative latency", method: "GET", path: "/api/v1/traces?max_duration_ms=-1", status: 422, code: "validation_error", message: "max_duration_ms"},
		{name: "list range upside down", method: "GET", path: "/api/v1/traces?min_duration_ms=10&max_duration_ms=5", status: 422, message: "min_duration_ms"},
		{name: "summary counts ingested", method: "GET", path: "/api/v1/traces/summary?window=1h", status: 200,
			fields: map[string]any{"data.buckets.0.runs": 2}},
		{name: "ingest empty", method: "POST", path: "/api/v1/traces/ingest", body: `{"spans":[]}`, status: 422, message: "spans"},
		{name: "ingest not json", method: "POST", path: "/api/v1/traces/ingest", body: `{"spans":`, status: 400},
		{name: "ingest wrong type", method: "POST", path: "/api/v1/traces/ingest", body: `{"spans":"x"}`, status: 400, message: "spans"},
		{name: "ingest too many", method: "POST", path: "/api/v1/traces/ingest", body: `{"spans":[` + strings.TrimSuffix(strings.Repeat(`{},`, maxIngestSpans+1), ",") + `]}`,
			status: 413, code: "request_too_large", message: "at most 10000 spans"},
		{name: "ingest too large", method: "POST", path: "/api/v1/traces/ingest", body: `{"spans":[{"name":"` + strings.Repeat("x", maxIngestBytes) + `"}]}`,
			status: 413, code: "request_too_large"},
		{name: "ingest media type", method: "POST", path: "/api/v1/traces/ingest", body: `{}`, header: map[string]string{"Content-Type": "text/plain"}, status: 415},
		{name: "ingest read-only key", method: "POST", path: "/api/v1/traces/ingest", body: ingest, header: map[string]string{"X-API-Key": readOnly},
			status: 403, code: "forbidden", message: "traces:write"},
		{name: "otlp read-only key", method: "POST", path: "/api/v1/otlp/v1/traces", body: `{}`, header: map[string]string{"X-API-Key": readOnly},
			status: 403, message: "traces:write"},
		{name: "otlp json empty", method: "POST", path: "/api/v1/otlp/v1/traces", body: `{}`, status: 200, raw: true},
		{name: "otlp key as bearer token", method: "POST", path: "/api/v1/otlp/v1/traces", body: `{}`, status: 200, raw: true,
			header: map[string]string{"X-API-Key": "", "Authorization": "Bearer " + e.key}},
		{name: "otlp json partial", method: "POST", path: "/api/v1/otlp/v1/traces", raw: true, status: 200,
			body: `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"ok",` +
				`"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000500000000"},{"traceId":"5b8efff798038103d269b633813fc60c",` +
				`"spanId":"eee19b7ec3c1b175","startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000500000000"}]}]}]}`,
			fields: map[string]any{"partialSuccess.rejectedSpans": "1"},
			check: func(t *testing.T, b map[string]any) {
				if !strings.Contains(lookup(b, "partialSuccess.errorMessage").(string), "eee19b7ec3c1b175") {
					t.Fatalf("message does not name the span: %v", b)
				}
			}},
		{name: "otlp bad json", method: "POST", path: "/api/v1/otlp/v1/traces", body: `{"resourceSpans":"x"}`, status: 400},
		{name: "otlp bad protobuf", method: "POST", path: "/api/v1/otlp/v1/traces", body: `{}`, header: map[string]string{"Content-Type": "application/x-protobuf"},
			status: 400},
		{name: "otlp media type", method: "POST", path: "/api/v1/otlp/v1/traces", body: `{}`, header: map[string]string{"Content-Type": "text/plain"}, status: 415},
		{name: "otlp encoding", method: "POST", path: "/api/v1/otlp/v1/traces", body: `{}`, header: map[string]string{"Content-Encoding": "br"}, status: 415},
		{name: "other workspace cannot read", method: "GET", path: "/api/v1/traces/sdk-trace-1", header: map[string]string{"X-API-Key": other}, status: 404},
		{name: "other workspace lists none", method: "GET", path: "/api/v1/traces", header: map[string]string{"X-API-Key": other}, status: 200,
			fields: map[string]any{"pagination.total": 0}},
		{name: "other workspace same ids", method: "POST", path: "/api/v1/traces/ingest", header: map[string]string{"X-API-Key": other},
			body: `{"spans":[` + span("root", "", "") + `]}`, status: 200, fields: map[string]any{"data.accepted": 1}},
		{name: "own trace unchanged", method: "GET", path: "/api/v1/traces/sdk-trace-1", status: 200, fields: map[string]any{"data.span_count": 2, "data.session_id": "s-1"}},
	})
	// The SDK helper.
	end := now
	res, err := e.c.IngestSpans(ctx, []client.IngestSpan{{ID: "sdk-a", TraceID: "sdk-trace-2", Name: "call", StartedAt: client.Ptr(now.Add(-time.Second)), EndedAt: end,
		Model: "gpt-4o-mini", TokenUsage: client.TokenUsage{PromptTokens: client.Ptr(int64(5)), CompletionTokens: client.Ptr(int64(5))}}, {ID: "sdk-b", TraceID: "sdk-trace-2"}})
	if err != nil || res.Accepted != 1 || res.Rejected != 1 || res.Errors[0].Index != 1 {
		t.Fatalf("IngestSpans: %+v %v", res, err)
	}
	sum, err := e.c.TraceSummaryGet(ctx, client.GetTraceSummaryParams{Window: "7d", Bucket: "hour"})
	if err != nil || sum.Bucket != "hour" || len(sum.Buckets) == 0 {
		t.Fatalf("summary: %+v %v", sum, err)
	}
	// The summary reads hourly rollups: its window starts at the start of an hour.
	if !sum.From.Equal(sum.From.Truncate(time.Hour)) || sum.To.Sub(sum.From) < 7*24*time.Hour {
		t.Fatalf("summary window: %v to %v", sum.From, sum.To)
	}
}

// TestOTLPAttributesJSON: the attributes written straight from OTLP values read back as the
// values sent (strings with quotes, control characters and invalid UTF-8; numbers, NaN,
// nested maps and slices).
func TestOTLPAttributesJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\r\x01\x1f", "é 中文 😀", "bad \xff\xfe utf8", "nul \x00 inside", "<&>"} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q → %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s) // encoding/json's reading of the same string
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("%q read back as %q, want %q", s, back, wantBack)
		}
	}
	m := pcommon.NewMap()
	m.PutStr("s", "a\"b")
	m.PutInt("i", -42)
	m.PutDouble("f", 1.5e300)
	m.PutDouble("nan", math.NaN())
	m.PutBool("b", true)
	m.PutEmpty("e")
	m.PutEmptySlice("l").AppendEmpty().SetStr("x")
	m.PutEmptyMap("m").PutInt("k", 1)
	w := attrWriter{buf: []byte{'{'}}
	for k, v := range m.All() {
		w.value(k, v)
	}
	var got map[string]any
	if err := json.Unmarshal(append(w.buf, '}'), &got); err != nil {
		t.Fatalf("%s: %v", w.buf, err)
	}
	if got["s"] != "a\"b" || got["i"] != -42.0 || got["f"] != 1.5e300 || got["nan"] != "NaN" || got["b"] != true || got["e"] != nil ||
		got["l"].([]any)[0] != "x" || got["m"].(map[string]any)["k"] != 1.0 {
		t.Fatalf("attributes: %s → %v", w.buf, got)
	}
}
