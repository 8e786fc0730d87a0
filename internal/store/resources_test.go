package store

import (
	"context"
	"slices"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// notResources are the tables of the schema that are no resource of their own: accounts and
// bookkeeping (Truncate handles them apart), and rows that belong to a declared resource and
// go with it (a trace's and a run's rollups and packed latency bins, the runs counted per hour, a score's values, a blob's data, a run's pending reply, a
// workspace's view of the model catalog).
var notResources = []string{"memberships", "users", "idempotency_keys", "model_health",
	"workspace_llm_models", "trigger_replies", "blob_data", "trace_rollups", "trace_rollup_bins", "trace_rollup_sketches", "usage_rollups", "score_values", "execution_hours"}

func TestResourcesCoverTheSchema(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		q := `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'workspace_id'`
		if s.Dialect() == Postgres {
			q = `SELECT table_name FROM information_schema.columns WHERE column_name = 'workspace_id' AND table_schema = current_schema()`
		}
		tables, err := s.strings(ctx, q)
		must(t, err)
		declared := make([]string, len(resources))
		for i, r := range resources {
			declared[i] = r.table
		}

		t.Run("every table with a workspace_id is a declared resource", func(t *testing.T) {
			for _, table := range tables {
				if !slices.Contains(declared, table) && !slices.Contains(notResources, table) {
					t.Errorf("table %s has a workspace_id but is not declared in resources (resources.go)", table)
				}
			}
		})
		t.Run("every declared table exists and is counted", func(t *testing.T) {
			stats, err := s.StoreStats(ctx)
			must(t, err)
			for _, r := range resources {
				if _, ok := stats[r.key]; !ok {
					t.Errorf("StoreStats lacks %s", r.key)
				}
			}
		})
		t.Run("every referable kind has a table", func(t *testing.T) {
			for _, k := range []domain.Kind{domain.KindAgent, domain.KindPrompt, domain.KindMCPTool, domain.KindGuardrail, domain.KindCredential, domain.KindDataSource, domain.KindLLMModel} {
				if kindTable(k) == "" {
					t.Errorf("kind %q is declared by no resource", k)
				}
			}
		})
	})
}
