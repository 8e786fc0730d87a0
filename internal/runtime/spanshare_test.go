package runtime

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestRunSharesIOWithSpans: a simple run stores its input and output once, on the execution:
// the root span and the prompt span share the input and the model call the output (and its
// model and provider attributes are its columns), and the trace reads back the
// values the spans held before (the root span's input is the run's input, the model call's
// output its answer with its tool calls).
func TestRunSharesIOWithSpans(t *testing.T) {
	ctx := context.Background()
	st, a := fixture(t)
	e := newEngine(st)
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(e)
	x := submitWith(t, e, a, a.Config, false)
	done, err := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
	if err != nil || done.Status != domain.StatusCompleted {
		t.Fatalf("run: %+v %v", done, err)
	}
	tr, err := st.TraceGet(ctx, a.WorkspaceID, x.TraceID)
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
			if want := `{"input":` + string(inText) + `,"prompt_id":""}`; string(sp.Input) != want {
				t.Errorf("prompt span input %s, want %s", sp.Input, want)
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
	if shared["agent"] != domain.SharedInput || shared["llm"] != domain.SharedOutput|domain.SharedModel || shared["prompt"] != domain.SharedPromptInput {
		t.Fatalf("shared: %v", shared)
	}
}
