package agentconfig

import (
	"slices"

	"github.com/agentplane/agentplane/internal/domain"
)

// Type declares one agent type: its name, what its runs may do, and the rule its config
// must meet beyond the common checks. The runtime runs each with the runner of the same
// name (internal/runtime/agenttypes.go); a test fails while one is missing.
type Type struct {
	// Name is what clients send as the agent's type.
	Name string
	// Doc says in a few words what a run of the type does, for the API document.
	Doc string
	// Tools reports whether runs call tools in a loop: MCP tools, data sources, memory and
	// the ask_user tool.
	Tools bool
	// OrderedSteps reports whether config.steps run in list order, so depends_on is refused.
	OrderedSteps bool
	// Check is the type's own rule over a config that passed the common checks; nil: none.
	Check func(c *domain.AgentConfig) error
}

// types are the agent types, in the order the document lists them.
var types = []Type{
	{Name: "simple", Doc: "one model call"},
	{Name: "agent", Doc: "a model calling tools in a loop", Tools: true},
	{Name: "chain", Doc: "steps run in list order", OrderedSteps: true, Check: needSteps("chain")},
	{Name: "workflow", Doc: "steps run as their depends_on allow", Check: needSteps("workflow")},
	{Name: "multi_agent", Doc: "a coordinator handing work to sub-agents", Check: func(c *domain.AgentConfig) error {
		if len(c.SubAgents) == 0 {
			return domain.Invalid("config.sub_agents", "a multi_agent agent needs at least one sub-agent")
		}
		return nil
	}},
	{Name: "approval", Doc: "one model call held at checkpoints for a person's approval", Check: func(c *domain.AgentConfig) error {
		if c.Approval == nil || len(c.Approval.Checkpoints) == 0 {
			return domain.Invalid("config.approval.checkpoints", "an approval agent needs at least one checkpoint")
		}
		return nil
	}},
}

// needSteps is the rule of a type that runs config.steps.
func needSteps(name string) func(c *domain.AgentConfig) error {
	return func(c *domain.AgentConfig) error {
		if len(c.Steps) == 0 {
			return domain.Invalid("config.steps", "a %s agent needs at least one step", name)
		}
		return nil
	}
}

// Types returns the name of every agent type, in the document's order.
func Types() []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t.Name
	}
	return out
}

// LookupType returns the declaration of an agent type.
func LookupType(name string) (Type, bool) {
	i := slices.IndexFunc(types, func(t Type) bool { return t.Name == name })
	if i < 0 {
		return Type{}, false
	}
	return types[i], true
}
