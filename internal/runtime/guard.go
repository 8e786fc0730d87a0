package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentplane/agentplane/internal/guardrail"
	"github.com/agentplane/agentplane/internal/llm"
)

// guards loads the version's enabled guardrails, compiled once per run.
func (r *run) guards(ctx context.Context) ([]*guardrail.Guard, error) {
	if r.compiled != nil || len(r.cfg.Guardrails) == 0 {
		return r.compiled, nil
	}
	for _, id := range r.cfg.Guardrails {
		g, err := r.e.st.GuardrailGet(ctx, r.x.WorkspaceID, id)
		if err != nil {
			return nil, fmt.Errorf("load guardrail %s: %w", id, err)
		}
		if !g.Enabled {
			continue
		}
		gd, err := guardrail.New(g)
		if err != nil {
			return nil, fmt.Errorf("guardrail %s: %w", id, err)
		}
		r.compiled = append(r.compiled, gd)
	}
	return r.compiled, nil
}

// check runs the guardrails at a stage as one span per guardrail. A block fails the run
// with a message naming the guardrail; redactions come back as the text to use.
func (r *run) check(ctx context.Context, stage guardrail.Stage, text string) (string, error) {
	guards, err := r.guards(ctx)
	if err != nil || len(guards) == 0 {
		return text, err
	}
	outcomes, out, blocked := guardrail.CheckAll(guards, stage, text)
	for _, o := range outcomes {
		if o.Skipped {
			continue
		}
		sp := r.span("guardrail", "guardrail: "+o.Name, map[string]any{"stage": stage})
		sp.Attributes["guardrail_id"] = o.GuardrailID
		sp.Attributes["action"] = o.Action
		var serr error
		if o.Blocked() {
			serr = fmt.Errorf("blocked")
		}
		r.end(sp, o, serr)
	}
	if blocked {
		last := outcomes[len(outcomes)-1]
		var failed []string
		for _, res := range last.Results {
			if !res.Passed {
				failed = append(failed, res.Scanner)
			}
		}
		return "", fmt.Errorf("the %s was blocked by guardrail %q (%s)", stage, last.Name, strings.Join(failed, ", "))
	}
	return out, nil
}

// guardInput checks the user's message and applies redactions to it.
func (r *run) guardInput(ctx context.Context, msgs []llm.Message) ([]llm.Message, error) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			text, err := r.check(ctx, guardrail.StageInput, msgs[i].Content)
			if err != nil {
				return nil, err
			}
			msgs[i].Content = text
			break
		}
	}
	return msgs, nil
}
