package runtime

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// TestRunSharesIOWithSpans: a simple run stores its input and output once, on the execution:
// the root span and the prompt span share the input and the model call the output (and its
// model and provider attributes are its columns), and the trace reads back the
// values the spans held before (the root span's input is the run's input, the model call's
// output its answer with its tool calls). A run whose system prompt has no variables (and no
// prompt template) writes no prompt span: its trace is the run and its model call.
func TestRunSharesIOWithSpans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, a := fixture(t)
	e := newEngine(st)
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(e)
	templated := *a.Config
	templated.SystemPrompt = "Answer {{message}} kindly."
	for _, c := range []struct {
		name string
		cfg  *domain.AgentConfig
		want map[string]domain.SpanShared
	}{
		{"no system prompt", a.Config, map[string]domain.SpanShared{"agent": domain.SharedInput, "llm": domain.SharedOutput | domain.SharedModel}},
		{"static system prompt", &domain.AgentConfig{Model: a.Config.Model, SystemPrompt: "Be brief."},
			map[string]domain.SpanShared{"agent": domain.SharedInput, "llm": domain.SharedOutput | domain.SharedModel}},
		{"system prompt with a variable", &templated, map[string]domain.SpanShared{"agent": domain.SharedInput,
			"llm": domain.SharedOutput | domain.SharedModel, "prompt": domain.SharedPromptInput}},
	} {
		t.Run(c.name, func(t *testing.T) { checkSharedSpans(t, st, submitWith(t, e, a, c.cfg, false), c.want) })
	}
}

// checkSharedSpans checks the spans of a completed run x: their kinds and shared bits (want),
// and the values read back.
func checkSharedSpans(t *testing.T, st *store.Store, x *domain.Execution, want map[string]domain.SpanShared) {
	t.Helper()
	ctx := context.Background()
	done, err := st.ExecutionGet(ctx, x.WorkspaceID, x.ID)
	if err != nil || done.Status != domain.StatusCompleted {
		t.Fatalf("run: %+v %v", done, err)
	}
	tr, err := st.TraceGet(ctx, x.WorkspaceID, x.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	var content struct{ Content string }
	if err := json.Unmarshal(done.Output, &content); err != nil {
		t.Fatal(err)
	}
	inText, _ := json.Marshal(map[string]any{"message": "hello there"})
	answer, _ := json.Marshal(map[string]any{"content": content.Content, "tool_calls": nil})
	shared := map[string]domain.SpanShared{}
	for _, sp := range tr.Spans {
		shared[sp.Kind] = sp.Shared
		switch sp.Kind {
		case "agent":
			if string(sp.Input) != string(inText) {
				t.Errorf("agent span input %s, want %s", sp.Input, inText)
			}
		case "prompt":
			if w := `{"input":` + string(inText) + `,"prompt_id":""}`; string(sp.Input) != w {
				t.Errorf("prompt span input %s, want %s", sp.Input, w)
			}
		case "llm":
			if string(sp.Output) != string(answer) {
				t.Errorf("llm span output %s, want %s", sp.Output, answer)
			}
			if sp.Model == nil || sp.Provider == nil || sp.Attributes["model"] != *sp.Model || sp.Attributes["provider"] != *sp.Provider {
				t.Errorf("llm span attributes %v, model %v, provider %v", sp.Attributes, sp.Model, sp.Provider)
			}
		}
		if len(sp.ID) != 16 {
			t.Errorf("span id %q: want 16 hex digits", sp.ID)
		}
	}
	if !maps.Equal(shared, want) {
		t.Fatalf("shared bits by span kind: %v, want %v", shared, want)
	}
}
