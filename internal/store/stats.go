package store

import (
	"context"
	"fmt"
)

// statTables maps each key of StoreStats to its table.
var statTables = []struct{ key, table string }{
	{"workspaces", "workspaces"},
	{"api_keys", "api_keys"},
	{"agents", "agents"},
	{"agent_versions", "agent_versions"},
	{"prompts", "prompts"},
	{"prompt_versions", "prompt_versions"},
	{"data_sources", "data_sources"},
	{"data_source_versions", "data_source_versions"},
	{"credentials", "credentials"},
	{"llm_models", "llm_models"},
	{"mcp_tools", "mcp_tools"},
	{"guardrails", "guardrails"},
	{"memories", "memories"},
	{"executions", "executions"},
	{"execution_event_batches", "execution_events"},
	{"traces", "traces"},
	{"spans", "spans"},
	{"approvals", "approvals"},
	{"chat_sessions", "chat_sessions"},
	{"chat_messages", "chat_messages"},
	{"score_configs", "score_configs"},
	{"scores", "scores"},
	{"evaluators", "evaluators"},
	{"datasets", "datasets"},
	{"dataset_items", "dataset_items"},
	{"asset_blobs", "asset_blobs"},
	{"assets", "assets"},
	{"agent_triggers", "agent_triggers"},
	{"trigger_events", "trigger_events"},
	{"webhook_deliveries", "webhook_deliveries"},
	{"annotation_queues", "annotation_queues"},
	{"annotation_items", "annotation_items"},
	{"experiments", "experiments"},
	{"experiment_items", "experiment_items"},
}

// StoreStats counts the rows of every resource across all workspaces.
func (s *Store) StoreStats(ctx context.Context) (map[string]int, error) {
	out := make(map[string]int, len(statTables))
	for _, t := range statTables {
		n, err := s.count(ctx, "SELECT count(*) FROM "+t.table, nil)
		if err != nil {
			return nil, fmt.Errorf("count %s: %w", t.table, err)
		}
		out[t.key] = n
	}
	return out, nil
}

// Truncate deletes every row of every table but the schema's own bookkeeping, in one
// transaction. The emulator's reset uses it before reloading its seed.
func (s *Store) Truncate(ctx context.Context) error {
	return s.InTx(ctx, func(tx *Store) error {
		for _, t := range []string{"memberships", "users"} {
			if _, err := tx.exec(ctx, "DELETE FROM "+t); err != nil {
				return fmt.Errorf("truncate %s: %w", t, err)
			}
		}
		for i := len(statTables) - 1; i >= 0; i-- {
			if _, err := tx.exec(ctx, "DELETE FROM "+statTables[i].table); err != nil {
				return fmt.Errorf("truncate %s: %w", statTables[i].table, err)
			}
		}
		// The emulator's reset forgets model health too (credential cool-downs, circuits).
		for _, t := range []string{"idempotency_keys", "model_health"} {
			if _, err := tx.exec(ctx, "DELETE FROM "+t); err != nil {
				return fmt.Errorf("truncate %s: %w", t, err)
			}
		}
		return nil
	})
}

// ExecutionsQueued counts the pending executions of every workspace, up to limit: the queue
// depth of the metrics, counted on the index of pending rows at each scrape, and bounded so
// a flood of queued runs cannot make a scrape slow.
func (s *Store) ExecutionsQueued(ctx context.Context, limit int) (int, error) {
	return s.count(ctx, fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM executions WHERE status = 'pending' LIMIT %d) q", max(limit, 0)), nil)
}
