package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
)

// processCPU is the CPU time this process has used (user and system, all threads).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchBatch is one OTLP request of 1,000 spans: 10 traces of 100 spans (a root and 99
// children: model calls with GenAI attributes and tool calls), ids unique to seq.
func benchBatch(seq int) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bench")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("bench-framework")
	sl := ss.Spans()
	start := time.Now().Add(-time.Hour)
	for t := range 10 {
		tid := pcommon.TraceID{byte(seq >> 24), byte(seq >> 16), byte(seq >> 8), byte(seq), byte(t), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
		root := pcommon.SpanID{byte(seq >> 16), byte(seq >> 8), byte(seq), byte(t), 0, 0, 0, 1}
		for i := range 100 {
			sp := sl.AppendEmpty()
			sp.SetTraceID(tid)
			if i == 0 {
				sp.SetSpanID(root)
				sp.SetName("invoke_agent bench")
				sp.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
				sp.Attributes().PutStr("session.id", fmt.Sprintf("session-%d", t))
			} else {
				sp.SetSpanID(pcommon.SpanID{byte(seq >> 16), byte(seq >> 8), byte(seq), byte(t), 0, byte(i >> 8), byte(i), 2})
				sp.SetParentSpanID(root)
				if i%2 == 0 {
					sp.SetName("chat gpt-4o-mini")
					sp.Attributes().PutStr("gen_ai.operation.name", "chat")
					sp.Attributes().PutStr("gen_ai.request.model", "gpt-4o-mini")
					sp.Attributes().PutStr("gen_ai.provider.name", "openai")
					sp.Attributes().PutInt("gen_ai.usage.input_tokens", 1200)
					sp.Attributes().PutInt("gen_ai.usage.output_tokens", 150)
				} else {
					sp.SetName("execute_tool search")
					sp.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
					sp.Attributes().PutStr("gen_ai.tool.name", "search")
				}
			}
			sp.SetKind(ptrace.SpanKindClient)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Millisecond)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i+5) * time.Millisecond)))
		}
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkOTLPIngest: POST /api/v1/otlp/v1/traces of 1,000-span protobuf batches, handled
// in-process on `serve`'s SQLite store (a file, WAL), against decoding the same batches
// alone (ptraceotlp UnmarshalProto), in the same run. Goal: at least 50,000 spans/s.
//
//	go test ./internal/api -run '^$' -bench OTLPIngest -benchtime 50x
func BenchmarkOTLPIngest(b *testing.B) {
	st, ws := benchStore(b)
	raw := benchKey(b, st, ws, "traces:write")
	srv := benchServer(b, st, ws, secretbox.NewRandom())
	batches := make([][]byte, b.N+1)
	for i := range batches {
		batches[i] = benchBatch(i)
	}
	post := func(body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/otlp/v1/traces", bytes.NewReader(body))
		req.Header.Set("X-API-Key", raw)
		req.Header.Set("Content-Type", "application/x-protobuf")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("export: %d %s", w.Code, w.Body)
		}
		resp := ptraceotlp.NewExportResponse()
		if err := resp.UnmarshalProto(w.Body.Bytes()); err != nil || resp.PartialSuccess().RejectedSpans() != 0 {
			b.Fatalf("export answer: %v, %d rejected", err, resp.PartialSuccess().RejectedSpans())
		}
	}
	post(batches[b.N]) // warm the key and the statements
	b.ResetTimer()
	var ingestD, decodeD, ingestCPU time.Duration
	for i := range b.N {
		t0 := time.Now()
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(batches[i]); err != nil || req.Traces().SpanCount() != 1000 {
			b.Fatalf("decode: %v", err)
		}
		decodeD += time.Since(t0)
		t0, c0 := time.Now(), processCPU()
		post(batches[i])
		ingestD += time.Since(t0)
		ingestCPU += processCPU() - c0
	}
	b.StopTimer()
	spans := float64(b.N * 1000)
	b.ReportMetric(spans/ingestD.Seconds(), "spans/s")
	b.ReportMetric(spans/decodeD.Seconds(), "decode-spans/s")
	b.ReportMetric(float64(ingestD)/float64(decodeD), "ingest/decode")
	// On a shared machine the wall clock also counts other processes' turns: the spans per
	// second of this process's CPU (all its threads, GC included) tell what one core does.
	b.ReportMetric(spans/ingestCPU.Seconds(), "spans/cpu-s")
	if n, _, err := st.TraceList(context.Background(), ws, domain.TraceFilter{}, domain.Page{Page: 1, Limit: 1}); err != nil || len(n) != 1 {
		b.Fatalf("no traces stored: %v", err)
	}
}
