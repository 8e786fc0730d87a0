package runtime

import (
	"testing"

	"github.com/agentplane/agentplane/internal/agentconfig"
)

func TestEveryAgentTypeHasARunner(t *testing.T) {
	t.Parallel()
	t.Run("every declared type runs", func(t *testing.T) {
		for _, name := range agentconfig.Types() {
			if agentRunners[name] == nil {
				t.Errorf("agent type %s is declared in agentconfig but has no runner in agentRunners", name)
			}
		}
	})
	t.Run("every runner is of a declared type", func(t *testing.T) {
		for name := range agentRunners {
			if _, ok := agentconfig.LookupType(name); !ok {
				t.Errorf("agentRunners runs %s, which agentconfig does not declare", name)
			}
		}
	})
}
