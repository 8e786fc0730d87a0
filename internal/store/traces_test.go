package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/pressly/goose/v3"
)

// TestSpansMigration starts from a database made before migration 00012 (with 00013 applied), stores spans the old way
// (one JSON array per batch), and checks that migrating again turns them into rows, one each,
// with the same fields, and that the trace keeps its end user.
func TestSpansMigration(t *testing.T) {
	forEachStoreAt(t, 11, func(t *testing.T, s *Store, p *goose.Provider) {
		ctx := context.Background()
		// As a database made before this migration was written: 00013 (scores) applied, 00012
		// not; Migrate applies 00012 out of order.
		if _, err := p.ApplyVersion(ctx, 13, true); err != nil {
			t.Fatal(err)
		}
		ws := mustWorkspace(t, s, "a")
		if _, err := s.exec(ctx, `INSERT INTO executions (id, workspace_id, agent_id, root_id, source, status, trace_id, created_at, updated_at, end_user_id)
			VALUES ('x1', $1, 'ag1', 'x1', 'api', 'completed', 'tr1', 1, 1, 'user-9')`, ws); err != nil {
			t.Fatal(err)
		}
		if _, err := s.exec(ctx, `INSERT INTO traces (id, workspace_id, execution_id, agent_id, name, status, started_at, created_at)
			VALUES ('tr1', $1, 'x1', 'ag1', 'Bot', 'completed', 1763724634120, 1763724634120)`, ws); err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat("é", 20000) // 40,000 bytes of JSON string
		batch1, _ := json.Marshal([]map[string]any{
			{"id": "s1", "trace_id": "tr1", "workspace_id": ws, "parent_id": nil, "name": "agent", "kind": "agent", "status": "ok",
				"input": map[string]any{"q": "hi"}, "output": nil, "error": nil, "attributes": map[string]any{}, "cost": 0,
				"token_usage": map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
				"started_at":  "2025-11-21T11:30:34.120Z", "ended_at": "2025-11-21T11:30:35.000Z", "duration_ms": 880},
		})
		batch2, _ := json.Marshal([]map[string]any{
			{"id": "s2", "trace_id": "tr1", "workspace_id": ws, "parent_id": "s1", "name": "gpt-4o", "kind": "llm", "status": "error",
				"input": big, "output": []any{1, 2}, "error": "boom", "attributes": map[string]any{"model": "gpt-4o", "provider": "openai"},
				"cost": 0.25, "token_usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
				"started_at": "2025-11-21T11:30:34.200Z", "ended_at": "2025-11-21T11:30:34.950Z", "duration_ms": 750},
		})
		for i, b := range [][]byte{batch1, batch2} {
			if _, err := s.exec(ctx, "INSERT INTO spans (trace_id, first_id, workspace_id, count, spans) VALUES ('tr1', $1, $2, 1, $3)",
				fmt.Sprintf("s%d", i+1), ws, string(b)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		tr, err := s.TraceGet(ctx, ws, "tr1")
		if err != nil {
			t.Fatal(err)
		}
		if tr.EndUserID == nil || *tr.EndUserID != "user-9" || len(tr.Spans) != 2 {
			t.Fatalf("trace after migration: %+v, %d spans", tr, len(tr.Spans))
		}
		a, b := tr.Spans[0], tr.Spans[1]
		if a.ID != "s1" || a.ParentID != nil || a.Kind != "agent" || string(a.Input) != `{"q":"hi"}` || a.Output != nil ||
			a.StartedAt.UnixMilli() != 1763724634120 || a.DurationMS == nil || *a.DurationMS != 880 {
			t.Fatalf("span 1: %+v", a)
		}
		if b.ID != "s2" || b.ParentID == nil || *b.ParentID != "s1" || b.Status != "error" || b.Error == nil || *b.Error != "boom" ||
			b.Model == nil || *b.Model != "gpt-4o" || b.Provider == nil || *b.Provider != "openai" || b.TokenUsage.TotalTokens != 15 ||
			b.Cost != 0.25 || string(b.Output) != "[1,2]" || *b.DurationMS != 750 {
			t.Fatalf("span 2: %+v", b)
		}
		var cut string
		if err := json.Unmarshal(b.Input, &cut); err != nil || !strings.HasPrefix(big, strings.Trim(cut, `"`)) || len(b.Input) > 2*domain.MaxSpanIO+2 {
			t.Fatalf("cut input (%d bytes): %v", len(b.Input), err)
		}
		if ok, err := s.spanExists(ctx, ws, "tr1", "s2"); !ok || err != nil {
			t.Fatalf("span s2 exists: %v %v", ok, err)
		}
		// Down and up again: the spans go back into batches and come out the same.
		if _, err := p.DownTo(ctx, 11); err != nil {
			t.Fatal(err)
		}
		var batches int
		if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM spans WHERE trace_id = 'tr1'").Scan(&batches); err != nil || batches != 1 {
			t.Fatalf("%d batches after down: %v", batches, err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		again, err := s.TraceGet(ctx, ws, "tr1")
		if err != nil || len(again.Spans) != 2 {
			t.Fatalf("after down and up: %+v %v", again, err)
		}
		for i, sp := range again.Spans {
			was := tr.Spans[i]
			if sp.ID != was.ID || !sp.StartedAt.Equal(was.StartedAt.Time) || *sp.DurationMS != *was.DurationMS || sp.Status != was.Status ||
				string(sp.Input) != string(was.Input) || string(sp.Output) != string(was.Output) || sp.Cost != was.Cost ||
				sp.TokenUsage != was.TokenUsage || (sp.ParentID == nil) != (was.ParentID == nil) {
				t.Fatalf("span %d after down and up: %+v, was %+v", i, sp, was)
			}
		}
	})
}

func TestSpanRowsAndIngest(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, other := mustWorkspace(t, s, "a"), mustWorkspace(t, s, "b")
		t0 := domain.Now()
		at := func(ms int) domain.Time { return domain.Time{Time: t0.Add(time.Duration(ms) * time.Millisecond)} }
		end := func(ms int) *domain.Time { v := at(ms); return &v }
		root := "00f067aa0ba902b7"
		model := "gpt-4o"
		spans := func() []*domain.Span {
			return []*domain.Span{
				{ID: root, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Name: "chat run", Kind: "agent", Status: "ok", StartedAt: at(0), EndedAt: end(900),
					TraceAgentID: "ag-ext", TraceSessionID: "conv-1", TraceEndUserID: "u-1", ServiceName: domain.PtrTo("svc")},
				{ID: "a1a2a3a4a5a6a7a8", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", ParentID: &root, Name: "chat gpt-4o", Kind: "llm", Status: "error",
					Model: &model, StartedAt: at(100), EndedAt: end(600), TokenUsage: domain.TokenUsage{PromptTokens: 100, CompletionTokens: 20}, Cost: 0.5,
					Input: json.RawMessage(`"` + strings.Repeat("x", domain.MaxSpanIO+10) + `"`)},
			}
		}
		for range 2 { // sent twice: upserted, not duplicated
			if err := s.SpanIngest(ctx, ws, spans()); err != nil {
				t.Fatal(err)
			}
		}
		tr, err := s.TraceGet(ctx, ws, "4bf92f3577b34da6a3ce929d0e0e4736")
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Spans) != 2 || tr.Name != "chat run" || tr.Status != domain.StatusFailed || tr.TokenUsage.TotalTokens != 120 || tr.Cost != 0.5 ||
			*tr.DurationMS != 900 || *tr.AgentID != "ag-ext" || *tr.SessionID != "conv-1" || *tr.EndUserID != "u-1" || *tr.ServiceName != "svc" ||
			!tr.StartedAt.Equal(t0.Time) || tr.ExecutionID != nil {
			t.Fatalf("ingested trace: %+v", tr)
		}
		if len(tr.Spans[1].Input) != domain.MaxSpanIO+2 {
			t.Fatalf("input not cut: %d bytes", len(tr.Spans[1].Input))
		}
		tree := domain.SpanTree(tr.Spans)
		if len(tree) != 1 || tree[0].ID != root || len(tree[0].Children) != 1 || tree[0].Children[0].ID != "a1a2a3a4a5a6a7a8" {
			t.Fatalf("tree: %+v", tree)
		}
		sp, err := s.SpanGet(ctx, ws, tr.ID, "a1a2a3a4a5a6a7a8")
		if err != nil || *sp.DurationMS != 500 || *sp.Model != "gpt-4o" {
			t.Fatalf("span get: %+v %v", sp, err)
		}
		// Tenancy: the other workspace sees nothing, and may hold a trace of the same id.
		if _, err := s.TraceGet(ctx, other, tr.ID); !IsNotFound(err) {
			t.Fatalf("other workspace reads the trace: %v", err)
		}
		if _, err := s.SpanGet(ctx, other, tr.ID, root); !IsNotFound(err) {
			t.Fatalf("other workspace reads the span: %v", err)
		}
		if err := s.SpanIngest(ctx, other, spans()[:1]); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.TraceGet(ctx, ws, tr.ID); len(got.Spans) != 2 {
			t.Fatalf("another workspace's ingest changed this one: %d spans", len(got.Spans))
		}
		// A later batch with the root's end moved re-totals the trace.
		late := spans()[:1]
		late[0].EndedAt = end(2000)
		if err := s.SpanIngest(ctx, ws, late); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.TraceGet(ctx, ws, tr.ID); *got.DurationMS != 2000 || got.TokenUsage.TotalTokens != 120 {
			t.Fatalf("re-totalled trace: %+v", got)
		}
		// Filters.
		for _, c := range []struct {
			f    domain.TraceFilter
			want int
		}{
			{domain.TraceFilter{AgentID: "ag-ext"}, 1}, {domain.TraceFilter{SessionID: "conv-1"}, 1}, {domain.TraceFilter{EndUserID: "u-1"}, 1},
			{domain.TraceFilter{EndUserID: "u-2"}, 0}, {domain.TraceFilter{Status: "failed"}, 1}, {domain.TraceFilter{Status: "completed"}, 0},
			{domain.TraceFilter{CreatedAfter: domain.Time{Time: t0.Add(-time.Second)}}, 1}, {domain.TraceFilter{CreatedBefore: domain.Time{Time: t0.Add(-time.Second)}}, 0},
		} {
			items, total, err := s.TraceList(ctx, ws, c.f, domain.Page{Page: 1, Limit: 20})
			if err != nil || len(items) != c.want || total != c.want {
				t.Fatalf("filter %+v: %d items, total %d, %v", c.f, len(items), total, err)
			}
		}
		// An execution's trace keeps its row when spans are ingested into it.
		x := &domain.Execution{ID: NewID(), WorkspaceID: ws, AgentID: "ag1", Source: "api", Status: domain.StatusPending, Input: domain.JSONObject{}, Metadata: domain.JSONObject{},
			TimeoutMS: 1000, EndUserID: domain.PtrTo("u-3")}
		xt := &domain.Trace{WorkspaceID: ws, ExecutionID: &x.ID, AgentID: domain.PtrTo("ag1"), Name: "Bot"}
		if err := s.ExecutionCreate(ctx, x, xt); err != nil {
			t.Fatal(err)
		}
		if err := s.SpanIngest(ctx, ws, []*domain.Span{{ID: "sdk-1", TraceID: xt.ID, Name: "extra", Kind: "span", Status: "error", StartedAt: at(0)}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.TraceGet(ctx, ws, xt.ID)
		if err != nil || got.Status != domain.StatusRunning || got.Name != "Bot" || len(got.Spans) != 1 || *got.EndUserID != "u-3" {
			t.Fatalf("execution trace after ingest: %+v %v", got, err)
		}
	})
}

func TestTraceSummary(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		hour := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
		// Agent a: 10 runs in one hour, durations 10..100 ms, the last two failed; agent b: one
		// run still going (no duration); one run two days back (outside a 24 h window).
		for i := range 10 {
			st := "completed"
			if i >= 8 {
				st = "failed"
			}
			mkTrace(t, s, ws, "a", hour.Add(time.Duration(i)*time.Minute), st, int64(10*(i+1)), 100, 10, 0.01)
		}
		mkTrace(t, s, ws, "b", hour.Add(5*time.Minute), "running", -1, 0, 0, 0)
		mkTrace(t, s, ws, "a", hour.Add(-48*time.Hour), "completed", 5, 1, 1, 1)
		to := domain.Time{Time: time.Now().UTC()}
		from := domain.Time{Time: to.Add(-24 * time.Hour)}
		rows, err := s.TraceSummary(ctx, ws, from, to, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 {
			t.Fatalf("%d buckets: %+v", len(rows), rows)
		}
		a, b := rows[0], rows[1]
		if *a.AgentID != "a" || !a.BucketStart.Equal(hour) || a.Runs != 10 || a.Errors != 2 || a.ErrorRate != 0.2 ||
			a.TokenUsage.TotalTokens != 1100 || fmt.Sprintf("%.2f", a.Cost) != "0.10" {
			t.Fatalf("agent a: %+v", a)
		}
		// percentile_cont over 10..100: p50 = 55, p95 = 95.5, p99 = 99.1 (the sketch's within 0.5 %).
		if !near(*a.LatencyMS.P50, 55) || !near(*a.LatencyMS.P95, 95.5) || !near(*a.LatencyMS.P99, 99.1) {
			t.Fatalf("agent a latency: p50 %v p95 %v p99 %v", *a.LatencyMS.P50, *a.LatencyMS.P95, *a.LatencyMS.P99)
		}
		if *b.AgentID != "b" || b.Runs != 1 || b.LatencyMS.P50 != nil {
			t.Fatalf("agent b: %+v", b)
		}
		days, err := s.TraceSummary(ctx, ws, domain.Time{Time: to.Add(-7 * 24 * time.Hour)}, to, 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var runs int64
		for _, d := range days {
			runs += d.Runs
			if d.BucketStart.Time != d.BucketStart.Truncate(24*time.Hour) {
				t.Fatalf("day bucket not at midnight: %v", d.BucketStart)
			}
		}
		if runs != 12 {
			t.Fatalf("7 days by day: %d runs in %+v", runs, days)
		}
	})
}

func mkTrace(t testing.TB, s *Store, ws, agent string, start time.Time, status string, durMS, in, out int64, cost float64) {
	t.Helper()
	var dur, ended any
	if durMS >= 0 {
		dur, ended = durMS, start.UnixMilli()+durMS
	}
	if _, err := s.exec(context.Background(), `INSERT INTO traces (id, workspace_id, agent_id, name, status, prompt_tokens, completion_tokens, cost,
		duration_ms, started_at, ended_at, created_at) VALUES ($1, $2, $3, 'run', $4, $5, $6, $7, $8, $9, $10, $9)`,
		NewID(), ws, agent, status, in, out, cost, dur, start.UnixMilli(), ended); err != nil {
		t.Fatal(err)
	}
}

func TestSpanTreeCycles(t *testing.T) {
	p := func(s string) *string { return &s }
	at := func(ms int) domain.Time { return domain.Time{Time: time.UnixMilli(int64(ms)).UTC()} }
	spans := []*domain.Span{
		{ID: "a", ParentID: p("c"), StartedAt: at(1)}, // a → c → b → a: a cycle
		{ID: "b", ParentID: p("a"), StartedAt: at(2)},
		{ID: "c", ParentID: p("b"), StartedAt: at(3)},
		{ID: "d", ParentID: p("d"), StartedAt: at(4)},       // its own parent
		{ID: "e", ParentID: p("missing"), StartedAt: at(5)}, // parent not stored
		{ID: "f", ParentID: p("e"), StartedAt: at(6)},
	}
	roots := domain.SpanTree(spans)
	var ids []string
	var walk func(ns []*domain.SpanNode, depth int)
	count := 0
	walk = func(ns []*domain.SpanNode, depth int) {
		for _, n := range ns {
			count++
			ids = append(ids, fmt.Sprintf("%d%s", depth, n.ID))
			walk(n.Children, depth+1)
		}
	}
	walk(roots, 0)
	if got := strings.Join(ids, " "); got != "0a 1b 2c 0d 0e 1f" || count != len(spans) {
		t.Fatalf("tree: %s", got)
	}
}

// TestTraceListFilters: the service filter and the inclusive cost and latency ranges of
// TraceList (Studio's Traces page), on both dialects.
func TestTraceListFilters(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "ranges")
		t0 := domain.Now()
		// Three traces of one llm span each: (service, duration ms, cost).
		for i, tr := range []struct {
			service string
			ms      int
			cost    float64
		}{{"checkout", 100, 0.01}, {"checkout", 900, 0.5}, {"batch", 2000, 0}} {
			end := domain.Time{Time: t0.Add(time.Duration(tr.ms) * time.Millisecond)}
			if err := s.SpanIngest(ctx, ws, []*domain.Span{{ID: "s", TraceID: fmt.Sprintf("t%d", i), Name: "call", Kind: "llm", Status: "ok",
				StartedAt: t0, EndedAt: &end, Cost: tr.cost, ServiceName: domain.PtrTo(tr.service)}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			name string
			f    domain.TraceFilter
			want string
		}{
			{"service", domain.TraceFilter{ServiceName: "checkout"}, "t1 t0"},
			{"cost from", domain.TraceFilter{MinCost: domain.PtrTo(0.01)}, "t1 t0"},
			{"cost to, inclusive", domain.TraceFilter{MaxCost: domain.PtrTo(0.01)}, "t2 t0"},
			{"latency range", domain.TraceFilter{MinDurationMS: domain.PtrTo(int64(100)), MaxDurationMS: domain.PtrTo(int64(900))}, "t1 t0"},
			{"service and latency", domain.TraceFilter{ServiceName: "checkout", MinDurationMS: domain.PtrTo(int64(500))}, "t1"},
			{"nothing", domain.TraceFilter{MinCost: domain.PtrTo(1.0)}, ""},
		} {
			list, total, err := s.TraceList(ctx, ws, c.f, domain.Page{Page: 1, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, tr := range list {
				ids = append(ids, tr.ID)
			}
			// Same creation time: newest first falls back to the id, descending.
			if got := strings.Join(ids, " "); got != c.want || total != len(ids) {
				t.Errorf("%s: %q (total %d), want %q", c.name, got, total, c.want)
			}
		}
	})
}
