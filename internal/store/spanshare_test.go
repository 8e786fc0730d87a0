package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/google/go-cmp/cmp"
)

// TestSpansShareExecution: the root span's input, a prompt span's input that wraps it, and the
// model call's answer that became the output are stored once, on the execution (NULL in the
// span's row), a model call's model and provider attributes once, in their columns, and all
// read back exactly as they were; values that only look alike, or are over MaxSpanIO, are stored on the span; and
// migrating down copies the shared values back into the spans.
func TestSpansShareExecution(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		long := strings.Repeat("x", domain.MaxSpanIO+10)
		input := domain.JSONObject{"message": "How long does shipping take?", "n": 3.5}
		output := json.RawMessage(`{"content":"About \"5\" days \u00e9."}`)
		x := &domain.Execution{WorkspaceID: ws, AgentID: "ag1", Source: "api", Status: domain.StatusRunning, Input: input, Metadata: domain.JSONObject{}}
		tr := &domain.Trace{WorkspaceID: ws, Name: "A"}
		if err := s.ExecutionCreate(ctx, x, tr); err != nil {
			t.Fatal(err)
		}
		inText, _ := json.Marshal(input)
		sp := func(id, kind, in, out string) *domain.Span {
			v := &domain.Span{ID: id, TraceID: tr.ID, WorkspaceID: ws, Name: id, Kind: kind, Status: "ok", StartedAt: domain.Now(), Attributes: domain.JSONObject{}}
			if in != "" {
				v.Input = json.RawMessage(in)
			}
			if out != "" {
				v.Output = json.RawMessage(out)
			}
			return v
		}
		spans := []*domain.Span{
			sp("s1", "agent", string(inText), `{"status":"completed"}`),
			sp("s2", "llm", `{"messages":2}`, `{"content":"About \"5\" days \u00e9.","tool_calls":null}`),
			sp("s3", "llm", `{"messages":2}`, `{"content":"About \"5\" days \u00e9.","tool_calls":[]}`), // not the answer
			sp("s4", "tool", `{"message":"How long does shipping take?","n":3.5} `, ""),                 // same value, not the same text
			sp("s5", "tool", fmt.Sprintf(`{"q":%q}`, long), ""),
			sp("s6", "prompt", `{"input":`+string(inText)+`,"prompt_id":""}`, `{"messages":[]}`),
			sp("s7", "prompt", `{"input":`+string(inText)+`,"prompt_id":"p1"}`, ""), // a template's
			sp("s8", "llm", `{"messages":2}`, ""),
			sp("s9", "llm", `{"messages":2}`, ""),
		}
		model, provider := "gpt-4o", "openai"
		spans[7].Attributes = domain.JSONObject{"model": model, "provider": provider, "stop_reason": "stop"}
		spans[8].Attributes = domain.JSONObject{"model": model, "provider": "azure"} // its provider column says openai
		spans[8].Model, spans[8].Provider = &model, &provider
		want := make([]string, len(spans))
		attrs := map[string]domain.JSONObject{}
		for i, v := range spans {
			attrs[v.ID] = v.Attributes
			want[i] = fmt.Sprintf("%s in=%s out=%s", v.ID, cutJSON(v.Input), cutJSON(v.Output))
		}
		domain.SpansShareExecution(spans, input, output)
		if err := s.SpanInsert(ctx, spans); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCompleted, domain.ExecutionPatch{Output: output}); err != nil {
			t.Fatal(err)
		}

		stored := func() []string {
			rows, err := s.r.QueryContext(ctx, "SELECT id, input IS NULL, output IS NULL, shared FROM spans WHERE trace_id = $1 ORDER BY id", tr.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var id string
				var noIn, noOut bool
				var shared int
				if err := rows.Scan(&id, &noIn, &noOut, &shared); err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("%s nullin=%t nullout=%t shared=%d", id, noIn, noOut, shared))
			}
			return out
		}
		read := func() []string {
			got, err := s.TraceGet(ctx, ws, tr.ID)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, v := range got.Spans {
				one, err := s.SpanGet(ctx, ws, tr.ID, v.ID)
				if err != nil {
					t.Fatal(err)
				}
				if string(one.Input) != string(v.Input) || string(one.Output) != string(v.Output) {
					t.Errorf("span %s: SpanGet %s %s, TraceGet %s %s", v.ID, one.Input, one.Output, v.Input, v.Output)
				}
				out = append(out, fmt.Sprintf("%s in=%v out=%v", v.ID, cutJSON(v.Input), cutJSON(v.Output)))
				if !cmp.Equal(one.Attributes, v.Attributes) || !cmp.Equal(v.Attributes, attrs[v.ID]) {
					t.Errorf("span %s: attributes %v (SpanGet %v), want %v", v.ID, v.Attributes, one.Attributes, attrs[v.ID])
				}
			}
			return out
		}

		t.Run("Stored", func(t *testing.T) {
			want := []string{"s1 nullin=true nullout=false shared=1", "s2 nullin=false nullout=true shared=2",
				"s3 nullin=false nullout=false shared=0", "s4 nullin=false nullout=true shared=0", "s5 nullin=false nullout=true shared=0",
				"s6 nullin=true nullout=false shared=4", "s7 nullin=false nullout=true shared=0", "s8 nullin=false nullout=true shared=8",
				"s9 nullin=false nullout=true shared=0"}
			if diff := cmp.Diff(want, stored()); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
		})
		t.Run("Read", func(t *testing.T) {
			if diff := cmp.Diff(fmtNil(want), read()); diff != "" {
				t.Fatalf("spans (-want +got):\n%s", diff)
			}
		})
		t.Run("Down", func(t *testing.T) {
			p, err := s.migrations()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.DownTo(ctx, 20); err != nil {
				t.Fatal(err)
			}
			rows, err := s.r.QueryContext(ctx, "SELECT id, input, output, attributes FROM spans WHERE trace_id = $1 ORDER BY id", tr.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var id string
				var in, out *string
				var a domain.JSONObject
				if err := rows.Scan(&id, &in, &out, &a); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s in=%s out=%s", id, orNil(in), orNil(out)))
				if !cmp.Equal(a, attrs[id]) {
					t.Errorf("span %s after down: attributes %v, want %v", id, a, attrs[id])
				}
			}
			rows.Close()
			if diff := cmp.Diff(fmtNil(want), got); diff != "" {
				t.Fatalf("spans after down (-want +got):\n%s", diff)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// fmtNil writes the <nil> of a missing value the way deref and %v of a nil any do.
func fmtNil(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.ReplaceAll(l, "%!s(<nil>)", "<nil>")
	}
	return out
}

func orNil(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
