package runtime

import (
	"context"

	"github.com/agentplane/agentplane/internal/llm"
)

// agentRunner produces the output of a run of one agent type from its rendered messages.
type agentRunner func(r *run, ctx context.Context, msgs []llm.Message) (string, error)

// agentRunners runs each agent type declared in internal/agentconfig (types.go), by name.
// TestEveryAgentTypeHasARunner fails while a declared type is missing here. It is filled in
// init because the runners reach back to the pipeline that reads it (sub-agents, steps).
var agentRunners map[string]agentRunner

func init() {
	agentRunners = map[string]agentRunner{
		"simple":      (*run).modelCall,
		"agent":       (*run).agentLoop,
		"chain":       (*run).chain,
		"workflow":    (*run).workflow,
		"multi_agent": (*run).multiAgent,
		"approval":    (*run).modelCall, // its checkpoints are held around the call, as for every type
	}
}

// modelCall is one streamed model call: the whole of a simple agent's run.
func (r *run) modelCall(ctx context.Context, msgs []llm.Message) (string, error) {
	return r.answer(ctx, "llm", "model call", msgs, true)
}
